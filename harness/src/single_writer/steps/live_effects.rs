//! Live steps that observe a side effect the seed forbids directly, where an outcome
//! alone would pass a wrong broker too: the lock file's descriptors (which processes
//! hold it: the master only, never the agent, what the agent forks, or another key's
//! processes), the engine's index opened read-only, an open that started no program,
//! the viewer told an id only once its alias is persisted, and the launch's cwd and
//! snapshot moment in the reconcile.

use std::io::Write;
use std::time::Duration;

use cucumber::{given, then, when};

use crate::drivers::{poll, scaled, wait_until};
use crate::single_writer::effects::{self, IndexWatch};
use crate::single_writer::live::{stub_name, Live, Tracked, WAIT_MS};
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// How long the broker gets to show a forbidden effect once its barrier held.
const SETTLE_MS: u64 = 1_500;

/// The PIDs of the session `key`'s processes: the tree under its agent's parent (the
/// master: its agent and whatever the agent forked), or under the agent alone when
/// its parent is a broker the suite started.
fn session_tree(live: &mut Live, key: &str) -> Vec<i32> {
    let agent = *live
        .sb
        .agents_of(&stub_name(key))
        .first()
        .or_harness("the session has no running agent");
    let all = effects::processes();
    let parent = all.iter().find(|p| p.pid == agent).map(|p| p.ppid);
    let brokers: Vec<i32> = live
        .brokers
        .values()
        .map(|&at| live.sb.instance(at).child.id() as i32)
        .collect();
    let root = match parent {
        Some(p) if p > 1 && !brokers.contains(&p) && p != std::process::id() as i32 => p,
        _ => agent,
    };
    let mut tree = effects::tree_of(&all, root);
    if let Some(&forked) = live.effects.forked.get(key) {
        tree.push(forked);
    }
    tree
}

#[when(regex = r#"^the agent of "([^"]+)" has a background process running$"#)]
async fn background_running(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let name = stub_name(&c[1]);
        let pid = poll("the agent's forked process", scaled(WAIT_MS), || {
            live.sb
                .turns(&name)
                .iter()
                .find(|t| t["turn"] == "forked")
                .and_then(|t| t["pid"].as_i64())
                .map(|p| p as i32)
                .filter(|p| crate::drivers::process::alive(*p))
        });
        live.effects.forked.insert(c[1].to_string(), pid);
    })
    .await;
}

#[then(regex = r#"^the background process of "([^"]+)" is still running$"#)]
async fn background_still_running(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let pid = *s
            .live()
            .effects
            .forked
            .get(&c[1])
            .or_harness("no background process was noted");
        assert!(
            crate::drivers::process::alive(pid),
            "the agent's background process {pid} is gone (the check below needs it alive)"
        );
    })
    .await;
}

#[then(regex = r#"^the lock file of "([^"]+)" is open in a process of the sandbox$"#)]
async fn lock_file_open(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.lock_file(&c[1]);
        let found = wait_until(scaled(WAIT_MS), || {
            let h = effects::holders(&file);
            (!h.is_empty(), h)
        });
        assert!(
            !found.is_empty(),
            "no process has {} open although the lock is held: the suite cannot see its descriptors",
            file.display()
        );
    })
    .await;
}

#[then(
    regex = r#"^neither the agent of "([^"]+)" nor any process it started holds its lock file$"#
)]
async fn agent_holds_no_lock(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.lock_file(&c[1]);
        let agent = *live
            .sb
            .agents_of(&stub_name(&c[1]))
            .first()
            .or_harness("the session has no running agent");
        let mut tree = effects::tree_of(&effects::processes(), agent);
        tree.extend(live.effects.forked.get(&c[1]).copied());
        let bad: Vec<_> = effects::holders(&file)
            .into_iter()
            .filter(|p| tree.contains(&p.pid))
            .collect();
        assert!(
            bad.is_empty(),
            "the lock file {} is open in {}: the agent's processes hold the lock's descriptor, so the lock outlives the master",
            file.display(),
            effects::describe(&bad)
        );
    })
    .await;
}

#[then(regex = r#"^no process of "([^"]+)" holds the lock file of "([^"]+)"$"#)]
async fn other_key_holds_no_lock(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.lock_file(&c[2]);
        let tree = session_tree(live, &c[1]);
        let bad: Vec<_> = effects::holders(&file)
            .into_iter()
            .filter(|p| tree.contains(&p.pid))
            .collect();
        assert!(
            bad.is_empty(),
            "the lock file of {} is open in {}, a process of {}: one key's lock reached another key's session",
            &c[2],
            effects::describe(&bad),
            &c[1]
        );
    })
    .await;
}

#[then(regex = r#"^no process holds the lock of "([^"]+)"$"#)]
async fn nobody_holds(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.lock_file(&c[1]);
        let free = wait_until(scaled(WAIT_MS), || {
            let free = live.sb.lock_state(&file) == crate::drivers::broker::LockState::Free;
            (free, free)
        });
        assert!(
            free,
            "the lock of {} is still held {} ms after its agent exited, open in {}",
            &c[1],
            scaled(WAIT_MS).as_millis(),
            effects::describe(&effects::holders(&file))
        );
    })
    .await;
}

#[when(regex = r#"^viewer (\w+)'s open of "([^"]+)" with "([^"]*)" completes$"#)]
async fn open_completes(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let (name, thread) = live.opening.take().or_harness("no open in flight");
        assert_eq!(name, c[1], "the open in flight is another viewer's");
        let viewer = thread
            .join()
            .unwrap_or_else(|_| crate::harness_error!("the opening thread panicked"))
            .unwrap_or_else(|r| panic!("the open of {} was refused: {r:?}", &c[2]));
        live.viewers.insert(
            c[1].to_string(),
            Tracked {
                viewer,
                base: 0,
                gen: None,
                key: c[2].to_string(),
                query: c[3].to_string(),
                broker: 0,
            },
        );
    })
    .await;
}

#[then(regex = r"^the broker started no other program$")]
async fn started_no_program(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let (counters, rules) = live
            .fault_counts
            .as_ref()
            .or_harness("the broker runs under no fault plan");
        let counted = counters.read(rules).or_harness("the fault plan's counters");
        // The injector counts every program image started under it: the broker's own
        // is the one that must be there (else the count says nothing).
        assert!(
            counted.loaded >= 1,
            "the injector counted no program at all: the count cannot show a master"
        );
        // A broker may start the profile's attach client to reach a master (a program
        // of its own, not the broker's image): then the images cannot tell a master
        // from an attach, and the row rests on its other checks (no agent, the
        // listener's socket kept).
        let t = crate::single_writer::templates::templates();
        let program = |w: &[String]| w.first().cloned().unwrap_or_default();
        if counted.loaded > 1 && program(&t.master_attach) != program(&t.broker) {
            crate::evidence::note(format!(
                "{} program images ran under the broker, whose attach client ({}) is a \
                 program of its own: a master cannot be told from an attach by the count, \
                 so it was not judged",
                counted.loaded,
                program(&t.master_attach)
            ));
            return;
        }
        assert_eq!(
            counted.loaded, 1,
            "{} program images ran under the broker: it started a master for a key whose socket another master had taken",
            counted.loaded
        );
    })
    .await;
}

#[then(regex = r"^the fault plan's rule (\d+) acted$")]
async fn rule_acted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i: usize = c[1].parse().or_harness("a rule number");
        let live = s.live();
        let (counters, rules) = live
            .fault_counts
            .as_ref()
            .or_harness("the broker runs under no fault plan");
        let rule = wait_until(scaled(WAIT_MS), || {
            let r = counters
                .read(rules)
                .ok()
                .and_then(|c| c.rules.get(i - 1).map(|r| (r.text.clone(), r.matched, r.fired)));
            (r.as_ref().is_some_and(|r| r.2 > 0), r)
        });
        if let Some((text, matched, 0)) = rule {
            panic!(
                "rule {i} of the fault plan ({text:?}) never acted: it matched {matched} calls (the implementation made no call it selects)"
            );
        }
        assert!(rule.is_some(), "rule {i} of the fault plan: no counts");
    })
    .await;
}

/// A directory of the sandbox's own as a launch's cwd, by its canonical path (what the
/// agent's `getcwd` reports).
fn work_dir(live: &Live, name: &str) -> std::path::PathBuf {
    let dir = live.sb.root.join(format!("work-{name}"));
    std::fs::create_dir_all(&dir).or_harness("creating a work directory");
    std::fs::canonicalize(&dir).or_harness("the work directory's path")
}

#[when(regex = r#"^viewer (\w+) opens "([^"]+)" with "([^"]*)" in a work directory$"#)]
async fn open_in_work_dir(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let dir = work_dir(live, &c[1]);
        let query = format!("{}&cwd={}", &c[3], dir.display());
        live.open(&c[1], &c[2], &query, 0, 0);
    })
    .await;
}

fn append_index(live: &Live, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(live.sb.engine_index())
        .or_harness("opening the engine's index");
    f.write_all(format!("{line}\n").as_bytes())
        .or_harness("writing the engine's index");
}

#[given(regex = r#"^the engine's index holds an earlier session "([^"]+)"$"#)]
#[when(regex = r#"^the session id "([^"]+)" appears in the engine's index$"#)]
async fn index_line(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| append_index(s.live(), &c[1])).await;
}

#[when(regex = r#"^the session id "([^"]+)" of another directory appears in the engine's index$"#)]
async fn index_line_elsewhere(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let other = work_dir(live, "elsewhere");
        append_index(live, &format!("{}\t{}", &c[1], other.display()));
    })
    .await;
}

#[then(regex = r#"^viewer (\w+) is told the real key "([^"]+)"$"#)]
async fn told_key(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer
            .pump(scaled(WAIT_MS), |v| !v.frames("id").is_empty());
        let ids = t.viewer.frames("id");
        assert!(
            !ids.is_empty(),
            "no id frame within {} ms: the id that appeared after the launch was never taken for the session's",
            scaled(WAIT_MS).as_millis()
        );
        assert_eq!(ids[0]["sid"], c[2], "the real key told");
    })
    .await;
}

#[given(regex = r"^the suite watches the engine's index$")]
async fn watch_index(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let path = live.sb.engine_index();
        let watch = IndexWatch::new(&path).or_harness("an inotify watch on the engine's index");
        live.effects.index_watch = Some(watch);
    })
    .await;
}

fn index_watch(live: &mut Live) -> &mut IndexWatch {
    live.effects
        .index_watch
        .as_mut()
        .or_harness("the suite watches no index")
}

#[then(regex = r"^the broker has read the engine's index$")]
async fn index_read(w: &mut World) {
    w.run(&[], None, |s, _| {
        let watch = index_watch(s.live());
        let reads = wait_until(scaled(WAIT_MS), || {
            watch.drain();
            (watch.reads > 0, watch.reads)
        });
        assert!(
            reads > 0,
            "the engine's index was never read: the launch took no snapshot of it"
        );
        // Its polls come after the snapshot: give them the time of several.
        std::thread::sleep(Duration::from_millis(SETTLE_MS));
    })
    .await;
}

#[then(regex = r"^nothing opened the engine's index for writing$")]
async fn index_not_written(w: &mut World) {
    w.run(&[], None, |s, _| {
        let watch = index_watch(s.live());
        watch.drain();
        assert_eq!(
            (watch.writes, watch.modified),
            (0, 0),
            "the engine's index was opened for writing {} time(s) and modified {} time(s) while only the broker read it ({} read-only opens): opencode.db is strictly read-only",
            watch.writes,
            watch.modified,
            watch.reads
        );
    })
    .await;
}

#[then(regex = r"^the engine's index was opened for writing once, by the agent's mint$")]
async fn index_written_once(w: &mut World) {
    w.run(&[], None, |s, _| {
        let watch = index_watch(s.live());
        let writes = wait_until(scaled(WAIT_MS), || {
            watch.drain();
            (watch.writes > 0, watch.writes)
        });
        assert!(writes > 0, "the agent's mint was not seen as a write-open");
        std::thread::sleep(Duration::from_millis(SETTLE_MS));
        watch.drain();
        assert_eq!(
            watch.writes, 1,
            "the engine's index was opened for writing {} times; only the agent's mint writes it",
            watch.writes
        );
    })
    .await;
}

#[when(regex = r#"^viewer (\w+) types "([^"]*)" as raw bytes$"#)]
async fn types_raw(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let line = format!("{}\r", &c[2]);
        s.live().viewer(&c[1]).viewer.raw_input(line.as_bytes());
    })
    .await;
}

#[when(regex = r"^the suite releases the lock it holds$")]
async fn release_held(w: &mut World) {
    w.run(&[], None, |s, _| {
        let held = s.live().held.take().or_harness("the suite holds no lock");
        drop(held);
    })
    .await;
}

#[when(regex = r#"^the broker has opened the lock file of "([^"]+)"$"#)]
async fn lock_file_opened(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let lock = s.live().lock_file(&c[1]);
        // The file exists once the broker opened it; its flock follows at once.
        poll("the broker to open the lock file", scaled(WAIT_MS), || {
            lock.exists().then_some(())
        });
    })
    .await;
}

#[when(regex = r#"^an? "(\w+)" agent is running$"#)]
async fn engine_agent_running(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        poll("the engine's agent", scaled(WAIT_MS), || {
            (!live.sb.agents_of_engine(&c[1]).is_empty()).then_some(())
        });
    })
    .await;
}

#[then(regex = r"^the agent's minted id is in the engine's index$")]
async fn minted_in_index(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let index = live.sb.engine_index();
        // The stand-in agent mints `ses_Stub<pid>` on its first input line.
        poll(
            "the agent's minted id in the index",
            scaled(WAIT_MS),
            || {
                std::fs::read_to_string(&index)
                    .ok()
                    .filter(|t| t.lines().any(|l| l.starts_with("ses_Stub")))
                    .map(|_| ())
            },
        );
    })
    .await;
}

#[given(regex = r#"^a symbolic link to a socket of the suite's is at the socket of "([^"]+)"$"#)]
async fn plant_link(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let target = live.sb.root.join("suite-elsewhere.sock");
        let listener = std::os::unix::net::UnixListener::bind(&target)
            .or_harness("binding the suite's socket");
        listener
            .set_nonblocking(true)
            .or_harness("a non-blocking listener");
        let path = live.session_socket(&c[1], 0);
        std::os::unix::fs::symlink(&target, &path).or_harness("planting a symbolic link");
        live.effects.link_target = Some((listener, target));
    })
    .await;
}

#[then(regex = r#"^nothing connected through the symbolic link at the socket of "([^"]+)"$"#)]
async fn nothing_through_link(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (listener, target) = s
            .live()
            .effects
            .link_target
            .as_ref()
            .or_harness("no symbolic link was planted");
        match listener.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => crate::harness_error!("accept on the suite's socket: {e}"),
            Ok(_) => panic!(
                "the broker connected to {} through the symbolic link at the socket path of {}: it followed the link instead of leaving a non-socket alone",
                target.display(),
                &c[1]
            ),
        }
    })
    .await;
}

#[then(regex = r#"^the symbolic link at the socket of "([^"]+)" is unchanged$"#)]
async fn link_kept(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let path = live.session_socket(&c[1], 0);
        let (_, target) = live
            .effects
            .link_target
            .as_ref()
            .or_harness("no symbolic link was planted");
        let now = std::fs::read_link(&path)
            .unwrap_or_else(|_| panic!("the symbolic link at {} was removed", path.display()));
        assert_eq!(&now, target, "the symbolic link was replaced");
    })
    .await;
}
