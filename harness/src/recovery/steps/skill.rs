//! Steps: The implementation's generated agent skill (docs/spec/recovery-skill.md).

use super::prelude::*;
use crate::recovery::skill;

#[when(regex = r"^the implementation's agent skill is generated$")]
async fn agent_skill_is_generated(w: &mut World) {
    w.run(&[], None, |w, _| {
        let text = skill::generate(w);
        w.skill = Some(text);
    })
    .await;
}

#[then(regex = r#"^the skill contains no "([^"]+)" in any letter case$"#)]
async fn skill_contains_no_any_case(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let text = w.skill.as_deref().or_harness("no skill was generated");
        let lines = skill::lines_with(text, &c[1]);
        // Line numbers only: the skill's text is the implementation's, not the report's.
        assert!(
            lines.is_empty(),
            "the skill names {} on line(s) {lines:?} (RFC §1: generated agent skills must not recommend it)",
            &c[1]
        );
    })
    .await;
}

#[then(regex = r"^the skill has a heading for each required point:$")]
async fn skill_has_heading_for_each_required_point(w: &mut World, #[step] step: &Step) {
    let rows: Vec<(String, String)> = step
        .table
        .as_ref()
        .map(|t| {
            t.rows
                .iter()
                .skip(1)
                .map(|r| (r[0].clone(), r[1].clone()))
                .collect()
        })
        .unwrap_or_default();
    w.run(&[], None, move |w, _| {
        if rows.is_empty() {
            crate::harness_error!("the step has no table of required points");
        }
        let text = w.skill.as_deref().or_harness("no skill was generated");
        let headings = skill::headings(text);
        let missing: Vec<&str> = rows
            .iter()
            .filter(|(_, marker)| !headings.iter().any(|h| h == marker))
            .map(|(point, _)| point.as_str())
            .collect();
        assert!(
            missing.is_empty(),
            "the skill has no heading for the required point(s) {missing:?} (docs/spec/recovery-skill.md)"
        );
    })
    .await;
}
