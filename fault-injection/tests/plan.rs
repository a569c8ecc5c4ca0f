//! The plan grammar of surface.md, as `check_plan` (and so libvxfault.so) parses it.

use vxfault::{check_plan, Op};

#[test]
fn accepts_every_form_of_the_grammar() {
    let plan = "fsync@*/recovery/*#2=EIO;rename@*.json=crash; write#3+=short:10 ;\
                write%12.5=torn:4;open@/x/\\#y=ENOSPC;close=crash-after;flock=delay:20;\
                unlink=lie;mkdir##2=EDQUOT;ftruncate##1+=EFBIG;rename=after:EIO;;";
    let rules = check_plan(plan).unwrap();
    let ops: Vec<Op> = rules.iter().map(|r| r.op).collect();
    assert_eq!(
        ops,
        vec![
            Op::Fsync,
            Op::Rename,
            Op::Write,
            Op::Write,
            Op::Open,
            Op::Close,
            Op::Flock,
            Op::Unlink,
            Op::Mkdir,
            Op::Ftruncate,
            Op::Rename
        ]
    );
    assert_eq!(rules[2].text, "write#3+=short:10");
    assert!(rules[1].kills && rules[3].kills && rules[5].kills);
    assert!(!rules[0].kills && !rules[6].kills);
    assert!(rules[3].random && !rules[2].random);
    assert!(check_plan("").unwrap().is_empty());
    assert!(check_plan(" ; ").unwrap().is_empty());
}

#[test]
fn rejects_bad_plans_with_the_rule_and_reason() {
    let cases: &[(&str, usize, &str)] = &[
        ("bogus=EIO", 1, "unknown op"),
        ("write=EBOGUS", 1, "unknown errno"),
        ("write=explode", 1, "unknown action"),
        ("write=after:", 1, "after:ERRNO needs an errno name"),
        ("write=after:EBOGUS", 1, "after:ERRNO needs an errno name"),
        ("write", 1, "missing '='"),
        ("write=", 1, "missing action"),
        ("write@=EIO", 1, "empty glob"),
        ("write#0=EIO", 1, "N >= 1"),
        ("write#x=EIO", 1, "N must be a decimal number"),
        ("write%101=EIO", 1, "percentage"),
        ("write%1.23456=EIO", 1, "percentage"),
        ("fsync=EIO;fsync=short:3", 2, "write only"),
        ("rename=torn:3", 1, "write only"),
        ("open=lie", 1, "not defined for open"),
        ("write=short:", 1, "byte count"),
        ("write=delay:99999999", 1, "one hour"),
        ("write@/a\\=EIO", 1, "missing '='"),
    ];
    for (plan, rule, msg) in cases {
        let e = check_plan(plan).unwrap_err();
        assert_eq!(e.rule, *rule, "{plan}: {e}");
        assert!(e.message.contains(msg), "{plan}: {e}");
        assert!(e.to_string().starts_with("bad plan: rule"), "{e}");
    }
    let many = vec!["write=EIO"; 33].join(";");
    assert!(check_plan(&many)
        .unwrap_err()
        .message
        .contains("too many rules"));
    assert!(check_plan(&vec!["write=EIO"; 32].join(";")).is_ok());
}

#[test]
fn trigger_errors_name_what_is_wrong() {
    let cases: &[(&str, &str)] = &[
        (
            "write#2%5=EIO",
            "one trigger: '#N' and '%P' cannot be combined",
        ),
        (
            "write%5#2=EIO",
            "one trigger: '#N' and '%P' cannot be combined",
        ),
        ("write#99999999999999999999999=EIO", "N is too large"),
        ("write#18446744073709551616=EIO", "N is too large"),
        ("write#0=EIO", "counts from 1: needs N >= 1"),
        ("write#=EIO", "'#' needs a number N"),
        ("write###2=EIO", "too many '#'"),
        ("write#-1=EIO", "N must be a decimal number"),
        ("#99999999999999999999999", "missing op"),
        ("#2=EIO", "missing op"),
    ];
    for (plan, msg) in cases {
        let e = check_plan(plan).unwrap_err();
        assert!(e.message.contains(msg), "{plan}: {e}");
    }
    assert!(check_plan("write#18446744073709551615=EIO").is_ok());
}

#[test]
fn bad_globs_are_refused() {
    for glob in ["[abc", "[!", "[]", "[z-a]", "/x/[!abc", "/x/[a-\\]", "[^"] {
        let plan = format!("write@{glob}=EIO");
        let e = check_plan(&plan).unwrap_err();
        assert!(
            e.message.contains("unterminated '[' class") || e.message.contains("reversed range"),
            "{plan}: {e}"
        );
    }
    assert!(check_plan("write@[z-a]=EIO")
        .unwrap_err()
        .message
        .contains("reversed range"));
    for glob in [
        "[abc]", "[!a-z]x", "[]]", "[!]]", "\\[abc", "[a\\]]", "[a-a]", "*.json",
    ] {
        let plan = format!("write@{glob}=EIO");
        assert!(check_plan(&plan).is_ok(), "{plan}");
    }
}
