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

/// The persist_blob fuzz target's own seeds (`fuzz/seeds/persist_blob/`, PAX records
/// the corpus does not carry) are valid blobs, so a campaign starts past the framing.
#[test]
fn the_fuzz_seeds_with_pax_mtime_are_valid() {
    let dir = corpus().join("../../../fuzz/seeds/persist_blob");
    let opts = ReadOptions::new(Layouts::builtin());
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "tar") {
            let bytes = std::fs::read(&path).unwrap();
            read(&bytes, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert_eq!(n, 3, "the three PAX mtime seeds");
}

/// The blob readers' libFuzzer dictionary (`corpus/fuzz/persist.dict`), generated
/// from the kit's own tables so it cannot drift: the header member's name and the
/// header's encoding, the file mode, every backend of persist/layouts.toml with the
/// literal parts of its patterns, the auth names; plus ustar's and PAX's fixed tokens.
fn persist_dictionary() -> String {
    use std::collections::BTreeSet;
    use vx_persist::layout::BUILTIN_LAYOUTS;
    use vx_persist::limits::{DEFAULT_HEADER_MEMBER, FILE_MODE};
    use vx_persist::SessionHeader;

    let mut tokens: Vec<String> = ["ustar\0", "00", "ustar  \0", "././@PaxHeader", "0000000\0"]
        .iter()
        .chain(&[
            " path=", " size=", " mtime=", "path=", "size=", "mtime=", "../", "/",
        ])
        .map(|t| t.to_string())
        .collect();
    tokens.push(format!("{FILE_MODE:07o}\0"));
    tokens.push(format!("{:07o}\0", FILE_MODE | 0o4000));
    tokens.push(DEFAULT_HEADER_MEMBER.to_owned());
    let sample = SessionHeader {
        backend: "\u{1}".into(),
        session_id: "\u{1}".into(),
    };
    let encoded = String::from_utf8(sample.encode()).unwrap();
    tokens.extend(encoded.split('\u{1}').map(str::to_owned));
    tokens.extend(Layouts::builtin().backend_names().map(str::to_owned));
    let doc: toml::Value = toml::from_str(BUILTIN_LAYOUTS).unwrap();
    for name in doc["auth"]["never"].as_array().unwrap() {
        tokens.push(name.as_str().unwrap().to_owned());
    }
    for backend in doc["backend"].as_table().unwrap().values() {
        let key = backend.get("key").into_iter();
        let files = backend
            .get("files")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten();
        for pattern in key.chain(files).filter_map(|p| p.as_str()) {
            for component in pattern.split('/') {
                // The literal text around the placeholders, each on its own.
                for (i, part) in component.split(['{', '}']).enumerate() {
                    if i % 2 == 0 && !part.is_empty() && part != "**" {
                        tokens.push(part.to_owned());
                    }
                }
                if !component.contains(['{', '*']) {
                    tokens.push(format!("{component}/"));
                }
            }
        }
    }
    let mut out = String::from(
        "# libFuzzer dictionary for the blob readers, generated from the kit's tables by\n\
         # reference/persist/tests/corpus_verdicts.rs (VX_UPDATE_FUZZ_DICTS=1 cargo test -p\n\
         # vx-persist --test corpus_verdicts fuzz_dictionary). Do not edit by hand.\n",
    );
    let mut seen = BTreeSet::new();
    for t in tokens.into_iter().filter(|t| !t.is_empty()) {
        if seen.insert(t.clone()) {
            let entry: String = t
                .bytes()
                .map(|b| match b {
                    b'\\' => "\\\\".to_owned(),
                    b'"' => "\\\"".to_owned(),
                    b' '..=b'~' => char::from(b).to_string(),
                    _ => format!("\\x{b:02X}"),
                })
                .collect();
            out.push_str(&format!("\"{entry}\"\n"));
        }
    }
    out
}

#[test]
fn fuzz_dictionary_is_current() {
    let path = corpus().join("../../fuzz/persist.dict");
    let want = persist_dictionary();
    vx_format::testing::assert_fuzz_dictionary(
        &path,
        &want,
        "cargo test -p vx-persist --test corpus_verdicts fuzz_dictionary",
    );
}
