//! Runs the fuzz targets' invariants over their seed corpora on stable, so a seed that
//! breaks an invariant fails CI even without a fuzzing run.

fn seeds(dir: &str) -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(dir);
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(root)
        .expect("seed directory")
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(out.len() >= 10, "seed corpus {dir} is too small");
    out.sort();
    out
}

#[test]
fn wire_seeds_hold_the_decoder_invariants() {
    let mut accepted = 0;
    for seed in seeds("wire") {
        vxref::fuzzing::wire_frame(&seed);
        accepted += usize::from(vxref::wire::decode_request(&seed).is_ok());
        // Every prefix too: truncated frames are the commonest malformed input.
        for cut in 0..seed.len() {
            vxref::fuzzing::wire_frame(&seed[..cut]);
        }
    }
    assert!(accepted >= 5, "the corpus should hold valid requests too");
}

#[test]
fn config_seeds_hold_the_zon_invariants() {
    let mut valid = 0;
    for seed in seeds("config") {
        vxref::fuzzing::zon_config(&seed);
        valid += usize::from(vxref::config::check_text(&seed).is_ok());
        for cut in 0..seed.len() {
            vxref::fuzzing::zon_config(&seed[..cut]);
        }
    }
    assert!(valid >= 3, "the corpus should hold valid configs too");
}

#[test]
fn attach_seeds_hold_the_client_frame_invariants() {
    let mut detached = 0;
    for seed in seeds("attach") {
        vxref::fuzzing::attach_frames(&seed);
        detached += usize::from(seed.ends_with(b"D\0\0\0\0"));
        for cut in 0..seed.len() {
            vxref::fuzzing::attach_frames(&seed[..cut]);
        }
    }
    assert!(detached >= 2, "the corpus should hold whole sequences too");
}
