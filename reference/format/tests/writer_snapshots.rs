//! Snapshots of the canonical writer for representative states, so any change to
//! field order, escaping or omission rules shows up in review.

use vx_format::*;

fn base() -> Checkpoint {
    Checkpoint {
        checkpoint: "c0f1e2d3c-4b5a-4968-8776-655443322110".into(),
        generation: 7,
        socket: "/run/user/1000/venomx/default.sock".into(),
        uid: 1000,
        captured_at: time::parse_timestamp("2026-11-29T10:00:00.123Z").unwrap(),
        shutdown: Shutdown::Open,
        sessions: vec![Session {
            id: 0,
            name: "work".into(),
        }],
        windows: vec![Window {
            id: 0,
            session: 0,
            name: "main".into(),
            revision: 1,
            nodes: vec![],
        }],
        panes: vec![],
    }
}

fn pane(id: u64) -> Pane {
    Pane {
        id,
        window: 0,
        session: 0,
        cols: 80,
        rows: 2,
        state: PaneState::Running,
        previous_state: None,
        float: None,
        tags: vec![],
        text: Text::Omitted,
    }
}

fn payload(cp: &Checkpoint, format: Format) -> String {
    write_payload(cp, format).unwrap()
}

#[test]
fn empty_window_and_session() {
    let mut cp = base();
    cp.sessions.push(Session {
        id: 3,
        name: "naïve \"quoted\" \\ name".into(),
    });
    insta::assert_snapshot!(payload(&cp, Format::V1));
}

#[test]
fn archive_with_plain_text_and_exits() {
    let mut cp = base();
    cp.shutdown = Shutdown::Clean;
    let mut a = pane(0);
    a.state = PaneState::Exited {
        exit: Some(Exit::Signal("SIGTERM".into())),
    };
    a.text = Text::Plain(PlainText {
        saved_at: time::parse_timestamp("2026-11-29T09:00:00.000Z").unwrap(),
        expires_at: time::parse_timestamp("2026-11-30T09:00:00.000Z").unwrap(),
        screen: vec!["$ make".into(), "ok ✓ 漢字".into()],
        history: vec!["previous output".into()],
    });
    let mut b = pane(1);
    b.state = PaneState::Exited { exit: None };
    b.previous_state = Some(PreviousState::Interrupted);
    b.text = Text::Expired;
    cp.panes = vec![a, b];
    cp.windows[0].nodes = vec![
        Node::Split {
            axis: Axis::Rows,
            first: 1,
            second: 2,
            ratio: None,
        },
        Node::Pane { pane: 1 },
        Node::Pane { pane: 0 },
    ];
    insta::assert_snapshot!(payload(&cp, Format::V1));
}

#[test]
fn floats_tags_and_ratios() {
    let mut cp = base();
    let mut tiled = pane(2);
    tiled.tags = vec![
        Tag {
            key: "owner".into(),
            value: "venomx".into(),
        },
        Tag {
            key: "role".into(),
            value: "agent".into(),
        },
    ];
    let mut float = pane(5);
    float.float = Some(FloatSpec {
        preset: Some("venom.settings".into()),
        width: Some(Extent::Percent(60)),
        height: Some(Extent::Cells(12)),
        anchor: Some(Anchor::BottomRight),
        x: Some(-1),
        y: Some(4096),
        min_cols: Some(20),
        min_rows: Some(5),
        border: Some(Border::Rounded),
        title: Some("build log".into()),
        z: 9,
    });
    let mut other = pane(9);
    other.state = PaneState::Exited {
        exit: Some(Exit::Code(3)),
    };
    cp.panes = vec![tiled, float, other];
    cp.windows[0].nodes = vec![
        Node::Split {
            axis: Axis::Cols,
            first: 1,
            second: 2,
            ratio: Some(3333),
        },
        Node::Pane { pane: 9 },
        Node::Pane { pane: 2 },
    ];
    insta::assert_snapshot!(payload(&cp, Format::V3));
    let envelope = String::from_utf8(write(&cp, Format::V3).unwrap()).unwrap();
    insta::assert_snapshot!("floats_tags_and_ratios_envelope", envelope);
}
