//! Raw bytes into the record parser; an accepted record encodes canonically and
//! parses back equal, and a fixed template's resume argv holds its id at the
//! placeholder index, argv[0] and every other element unchanged.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vx_agentsession::expand::{with_identity, Identity};
use vx_agentsession::record::parse;
use vx_agentsession::template::{self, Template};

const TEMPLATE: &str = r#"
id = "fuzz-agent"
[session_identity]
mode = "native-or-phux"
native_env = "PHUX_FUZZ_SESSION_ID"
restore = "external-cli"
resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}", "--quiet"]
[launch]
command = ["bash", "${PHUX_PLUGIN_ROOT}/bin/wrap.sh", "--", "agent"]
"#;

fn fixed() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| template::parse(TEMPLATE.as_bytes()).expect("fixed template"))
}

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::agent_record);
    let Ok(record) = parse(data) else { return };
    let encoded = record.encode();
    assert_eq!(parse(&encoded).expect("canonical encoding parses"), record);
    assert_eq!(parse(&encoded).unwrap().encode(), encoded);

    let e = with_identity(fixed(), "/plugins/fuzz", Identity::Resume(&record.native_id))
        .expect("a valid record's id expands");
    let want = ["bash", "/plugins/fuzz/bin/wrap.sh", "--", "agent", "--resume", "", "--quiet"];
    assert_eq!(e.id_index, Some(5));
    assert_eq!(e.argv.len(), want.len());
    for (i, (got, want)) in e.argv.iter().zip(want).enumerate() {
        if i == 5 {
            assert_eq!(got, &record.native_id);
        } else {
            assert_eq!(got, want, "element {i} changed");
        }
    }
    assert_eq!(e.env.as_ref().map(|(_, v)| v.as_str()), Some(record.native_id.as_str()));
});
