//! Steps: Planting files in the store and tampering with them.

use super::prelude::*;

#[given(
    regex = r#"^checkpoint "(\w+)" of format (\d) with generation (\d+)(?: captured (\d+) s ago| captured (\d+) s in the future)? is planted in the store(?: as "([^"]+)")?$"#
)]
async fn checkpoint_is_planted_in_store(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let name = c[1].to_string();
        let format: u32 = c[2].parse().or_harness("a number in the step");
        let gen: u64 = c[3].parse().or_harness("a number in the step");
        let offset = match (c.get(4), c.get(5)) {
            (Some(ago), _) => -ago
                .as_str()
                .parse::<i64>()
                .or_harness("a number in the step"),
            (_, Some(ahead)) => ahead
                .as_str()
                .parse::<i64>()
                .or_harness("a number in the step"),
            _ => -60,
        };
        let defect = c.get(6).map_or("intact", |m| m.as_str()).to_string();
        let f = w.fixture(format, gen, offset);
        w.plant(&name, &f, &defect);
        w.twins.planted(&name, &f, &defect, offset);
    })
    .await;
}

#[given(
    regex = r#"^checkpoint "(\w+)" of format (\d) with generation (\d+) is planted in the store of another socket$"#
)]
async fn checkpoint_is_planted_in_store_of_another_socket(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let other = w.ph.runtime_dir.join("venomx/other.sock");
        let store =
            w.ph.state_home
                .join("venomx/recovery")
                .join(crate::recovery::scenario::socket_key(&other));
        let mut f = w.fixture(
            c[2].parse().or_harness("a number in the step"),
            c[3].parse().or_harness("a number in the step"),
            -60,
        );
        f.socket = other.to_string_lossy().into_owned();
        let name = c[1].to_string();
        w.plant_in(&store, &name, &f, "intact");
    })
    .await;
}

#[given(regex = r#"^the store file of "(\w+)" is chmod (0[0-7]{3})$"#)]
async fn store_file_chmod(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let mode = u32::from_str_radix(&c[2], 8).unwrap();
        if mode != 0o600 {
            w.twins.damaged_needs_twin(
                &c[1],
                format!("the same checkpoint with mode 0600, not {}", &c[2]),
            );
        }
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .or_harness("chmod");
    })
    .await;
}

#[given(regex = r#"^the store file of "(\w+)" is owned by uid (\d+)$"#)]
async fn store_file_owned_by_uid(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let uid: u32 = c[2].parse().or_harness("a number in the step");
        w.twins.damaged_needs_twin(
            &c[1],
            format!("the same checkpoint owned by the daemon's uid, not {uid}"),
        );
        std::os::unix::fs::lchown(&path, Some(uid), None).or_harness("chown needs root");
    })
    .await;
}

#[given(regex = r#"^the store file of "(\w+)" gets a second hard link$"#)]
async fn store_file_gets_second_hard_link(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        std::fs::hard_link(&path, w.dir.path().join("second-link")).or_harness("link");
        w.twins
            .damaged_needs_twin(&c[1], "the same checkpoint with one link".into());
    })
    .await;
}

#[given(
    regex = r#"^the store file of "(\w+)" is replaced by a symlink to a valid checkpoint outside the store$"#
)]
#[when(
    regex = r#"^the store file of "(\w+)" is replaced by a symlink to a valid checkpoint outside the store$"#
)]
async fn store_file_replaced_by_symlink_valid_checkpoint(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        w.twins
            .damaged_needs_twin(&c[1], "the same checkpoint as a regular file".into());
        let outside = w.dir.path().join("outside.json");
        std::fs::copy(&path, &outside).or_harness("copy");
        std::fs::remove_file(&path).or_harness("unlink");
        std::os::unix::fs::symlink(&outside, &path).or_harness("symlink");
    })
    .await;
}

#[given(regex = r"^the store directory is chmod 0755$")]
async fn store_directory_chmod_0755(w: &mut World) {
    w.run(&[], None, |w, _| {
        std::fs::set_permissions(
            &w.ph.store,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .or_harness("chmod store");
    })
    .await;
}
