//! Steps: What `recovery.list` says about one file beyond its status (RFC §6: a
//! generation only when the file was safely decoded).

use super::prelude::*;

#[then(
    regex = r#"^the result lists checkpoint "([^"]+)" with status "(\w+)" and (no generation|generation (\d+))$"#
)]
async fn result_lists_checkpoint_with_status_and_generation(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let list = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no checkpoints array in {got}"));
        let rows: Vec<&Value> = list
            .iter()
            .filter(|e| e.get("checkpoint").and_then(Value::as_str) == Some(&c[1]))
            .collect();
        assert_eq!(rows.len(), 1, "rows for checkpoint {} in {got}", &c[1]);
        let row = rows[0];
        assert_eq!(
            row.get("status").and_then(Value::as_str),
            Some(&c[2]),
            "status of {}",
            &c[1]
        );
        let want: Option<Value> = c
            .get(4)
            .map(|n| json!(n.as_str().parse::<u64>().or_harness("a number in the step")));
        assert_eq!(
            row.get("generation"),
            want.as_ref(),
            "generation of {}",
            &c[1]
        );
    })
    .await;
}
