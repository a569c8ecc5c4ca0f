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

/// libFuzzer's entry syntax: `\\`, `\"` and `\xHH` for anything not printable ASCII.
fn dict_entry(token: &str) -> String {
    let body: String = token
        .bytes()
        .map(|b| match b {
            b'\\' => "\\\\".to_owned(),
            b'"' => "\\\"".to_owned(),
            b' '..=b'~' => char::from(b).to_string(),
            _ => format!("\\x{b:02X}"),
        })
        .collect();
    format!("\"{body}\"\n")
}

fn dictionary(header: &str, tokens: impl IntoIterator<Item = String>) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = header.to_owned();
    for t in tokens {
        if !t.is_empty() && seen.insert(t.clone()) {
            out.push_str(&dict_entry(&t));
        }
    }
    out
}

/// The wire readers' dictionary, from the kit's tables: the members of a request and
/// of a reply as the encoders write them, every verb and its params, every event
/// type and every error code.
fn wire_dictionary() -> String {
    use vxref::manifest::{EVENTS, VERBS};
    let mut tokens: Vec<String> = [
        "{", "}", "[", "]", ":", ",", "\"", "\\", "\\u0000", "null", "true",
    ]
    .iter()
    .chain(&["false", "\n", "9007199254740991", "9007199254740992"])
    .map(|t| t.to_string())
    .collect();
    let request = vxref::wire::encode_request(1, "v", &serde_json::Map::new());
    let error = vxref::errors::ApiError::new(vxref::errors::ErrorCode::ALL[0], "m");
    let reply = vxref::wire::encode_error(&serde_json::Value::Null, &error);
    let ok = vxref::wire::encode_ok(&serde_json::Value::Null, &serde_json::Value::Null);
    for frame in [request, reply, ok] {
        let value: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        for key in value.as_object().unwrap().keys() {
            tokens.push(format!("\"{key}\""));
        }
        if let Some(inner) = value.get("error").and_then(|e| e.as_object()) {
            tokens.extend(inner.keys().map(|k| format!("\"{k}\"")));
        }
    }
    for verb in VERBS {
        tokens.push(format!("\"{}\"", verb.name));
        tokens.extend(verb.params.iter().map(|p| format!("\"{}\"", p.name)));
    }
    tokens.extend(EVENTS.iter().map(|e| format!("\"{}\"", e.name)));
    tokens.extend(
        vxref::errors::ErrorCode::ALL
            .iter()
            .map(|c| format!("\"{}\"", c.as_str())),
    );
    dictionary(
        "# libFuzzer dictionary for the wire and attach readers, generated from the kit's\n\
         # tables by reference/daemon/tests/fuzz_seeds.rs (VX_UPDATE_FUZZ_DICTS=1 cargo test\n\
         # -p vxref --test fuzz_seeds fuzz_dictionar). Do not edit by hand.\n",
        tokens,
    )
}

/// The ZON reader's dictionary: ZON's syntax, then every key and enum literal the
/// schema's writer puts in the default config and in every seed the schema accepts.
fn zon_dictionary() -> String {
    use vxref::config::schema::Config;
    use vxref::config::zon::{self, Zon};
    fn walk(z: &Zon, out: &mut Vec<String>) {
        match z {
            Zon::Struct(fields) => {
                for (k, v) in fields {
                    out.push(format!(".{k}"));
                    walk(v, out);
                }
            }
            Zon::Tuple(items) => items.iter().for_each(|v| walk(v, out)),
            // Also as a string: the schema refuses a string where a literal belongs.
            Zon::Enum(e) => out.extend([format!(".{e}"), format!("\"{e}\"")]),
            _ => {}
        }
    }
    let mut tokens: Vec<String> = [
        ".{", "}", " = ", ".", ",", "true", "false", "null", "0x", "-",
    ]
    .iter()
    .chain(&["\"", "\\", "//"])
    .map(|t| t.to_string())
    .collect();
    let mut keys = Vec::new();
    walk(&Config::default().to_zon(), &mut keys);
    for seed in seeds("config") {
        if let Ok(Ok(config)) = zon::parse(&seed).map(|z| Config::from_zon(&z)) {
            walk(&config.to_zon(), &mut keys);
        }
    }
    keys.sort();
    tokens.extend(keys);
    dictionary(
        "# libFuzzer dictionary for the ZON config reader, generated from the schema by\n\
         # reference/daemon/tests/fuzz_seeds.rs (VX_UPDATE_FUZZ_DICTS=1 cargo test -p vxref\n\
         # --test fuzz_seeds fuzz_dictionar). Do not edit by hand.\n",
        tokens,
    )
}

#[test]
fn fuzz_dictionaries_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/fuzz");
    for (file, want) in [
        ("wire.dict", wire_dictionary()),
        ("zon.dict", zon_dictionary()),
    ] {
        vx_format::testing::assert_fuzz_dictionary(
            &dir.join(file),
            &want,
            "cargo test -p vxref --test fuzz_seeds fuzz_dictionar",
        );
    }
}
