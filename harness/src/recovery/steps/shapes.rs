//! Steps: What `recovery.list` says about one file beyond its status (RFC §6: a
//! generation only when the file was safely decoded).

use super::prelude::*;

#[then(
    regex = r#"^the result lists checkpoint "([^"]+)" with status "(\w+)" and (no generation|generation (\d+))$"#
)]
async fn result_lists_checkpoint_with_status_and_generation(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let row = super::outcomes::listed_row(&ok_value(w), &c[1], &c[2]);
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
