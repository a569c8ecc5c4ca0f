//! Every case of corpus/persist/blobs (made by Python's tarfile, independent of the
//! Rust writer) gets its expected verdict, and every accepted case re-packs to bytes
//! that read back to the same session.

use std::path::PathBuf;

use vx_persist::blob::{read, write, ReadOptions};
use vx_persist::Layouts;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/persist/blobs")
}

#[test]
fn every_corpus_case_gets_its_expected_verdict() {
    let expected = std::fs::read_to_string(corpus().join("expected.jsonl")).unwrap();
    let mut cases = 0;
    for line in expected.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(corpus().join(file)).unwrap();
        let mut opts = ReadOptions::new(Layouts::builtin());
        if let (Some(b), Some(id)) = (case["backend"].as_str(), case["session_id"].as_str()) {
            opts = opts.expecting(b, id);
        }
        let got = read(&bytes, &opts);
        match (&got, case["result"].as_str().unwrap()) {
            (Ok(blob), "valid") => {
                let canonical = write(&blob.header, &blob.files(), &opts).unwrap();
                let again = read(&canonical, &opts).unwrap();
                let sorted = |mut f: Vec<vx_persist::blob::SessionFile>| {
                    f.sort();
                    f
                };
                assert_eq!(again.header, blob.header, "{file}");
                assert_eq!(
                    again.files(),
                    sorted(blob.files()),
                    "{file}: canonical order is sorted"
                );
                assert_eq!(
                    write(&again.header, &again.files(), &opts).unwrap(),
                    canonical,
                    "{file}"
                );
            }
            (Err(e), code) => {
                assert_eq!(
                    (e.code().as_str(), Some(e.rule.id())),
                    (code, case["rule"].as_str()),
                    "{file}: {e}"
                );
            }
            (Ok(_), code) => panic!("{file}: accepted, expected {code}"),
        }
        cases += 1;
    }
    assert!(cases >= 50, "corpus has {cases} cases");
}
