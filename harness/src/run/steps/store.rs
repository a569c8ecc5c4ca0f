//! Steps: Planting files in the store and tampering with them.

use super::*;

pub(super) fn dispatch(w: &mut Inner, t: &str) -> bool {
    if let Some(c) = step!(
        t,
        r#"^checkpoint "(\w+)" of format (\d) with generation (\d+)(?: captured (\d+) s ago| captured (\d+) s in the future)? is planted in the store(?: as "([^"]+)")?$"#
    ) {
        let name = c[1].to_string();
        let format: u32 = c[2].parse().unwrap();
        let gen: u64 = c[3].parse().unwrap();
        let offset = match (c.get(4), c.get(5)) {
            (Some(ago), _) => -ago.as_str().parse::<i64>().unwrap(),
            (_, Some(ahead)) => ahead.as_str().parse::<i64>().unwrap(),
            _ => -60,
        };
        let defect = c.get(6).map_or("intact", |m| m.as_str()).to_string();
        let f = w.fixture(format, gen, offset);
        w.plant(&name, &f, &defect);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^checkpoint "(\w+)" of format (\d) with generation (\d+) is planted in the store of another socket$"#
    ) {
        let other = w.ph.runtime_dir.join("venomx/other.sock");
        let store =
            w.ph.state_home
                .join("venomx/recovery")
                .join(super::super::world::socket_key(&other));
        let mut f = w.fixture(c[2].parse().unwrap(), c[3].parse().unwrap(), -60);
        f.socket = other.to_string_lossy().into_owned();
        let name = c[1].to_string();
        w.plant_in(&store, &name, &f, "intact");
        return true;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" is chmod (0[0-7]{3})$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let mode = u32::from_str_radix(&c[2], 8).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .expect("harness-error: chmod");
        return true;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" is owned by uid (\d+)$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let uid: u32 = c[2].parse().unwrap();
        std::os::unix::fs::lchown(&path, Some(uid), None).expect("harness-error: chown needs root");
        return true;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" gets a second hard link$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        std::fs::hard_link(&path, w.dir.path().join("second-link")).expect("harness-error: link");
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the store file of "(\w+)" is replaced by a symlink to a valid checkpoint outside the store$"#
    ) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let outside = w.dir.path().join("outside.json");
        std::fs::copy(&path, &outside).expect("harness-error: copy");
        std::fs::remove_file(&path).expect("harness-error: unlink");
        std::os::unix::fs::symlink(&outside, &path).expect("harness-error: symlink");
        return true;
    }
    if step!(t, r"^the store directory is chmod 0755$").is_some() {
        std::fs::set_permissions(
            &w.ph.store,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("harness-error: chmod store");
        return true;
    }
    false
}
