//! Raw bytes into the template parser (up to the first NUL; the rest is a native
//! id). An accepted template never expands an id into argv[0], nor into argv[1]
//! after a shell, never launches an interpreter with one, and its expansions are
//! bounded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vx_agentsession::exec_policy::{classify, ProgramClass};
use vx_agentsession::expand::{with_identity, Identity};
use vx_agentsession::limits::MAX_EXPANDED_BYTES;
use vx_agentsession::template::parse;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::integration_template);
    let (text, id) = match data.iter().position(|b| *b == 0) {
        Some(nul) => (&data[..nul], String::from_utf8_lossy(&data[nul + 1..]).into_owned()),
        None => (data, "session-42".to_owned()),
    };
    let Ok(template) = parse(text) else { return };
    for identity in [Identity::Resume(&id), Identity::Fresh(&id)] {
        let Ok(e) = with_identity(&template, "/plugins/p", identity) else { continue };
        assert!(template.restorable());
        let index = e.id_index.expect("an identity expansion places the id");
        assert_eq!(e.argv[index], id);
        assert_ne!(index, 0, "id as the program");
        let class = classify(&e.argv[0]);
        assert_ne!(class, ProgramClass::Runner, "id given to an interpreter");
        if class == ProgramClass::Shell {
            assert_ne!(index, 1, "id as shell source");
        }
        let bytes: usize = e.argv.iter().map(|a| a.len() + 1).sum();
        assert!(bytes <= MAX_EXPANDED_BYTES);
    }
});
