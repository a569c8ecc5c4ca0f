//! `vxbroker client`: the kit's viewer as a command, for suites that certify the
//! seed's client-side clauses from outside (sw-client-no-force). It connects to one
//! session's terminal route, writes the session's output to stdout, and after every
//! drop reconnects with `have` and `gen` through [`Client::connect`], which never
//! sends `force=1`; `--take-over` makes the first connect an explicit take-over, once.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::client::{Client, ClientError, Event, Options, Transport};
use crate::negative::{self, Defect};

/// Pause between a drop and the reconnect (a transient drop, not a retry storm).
const RECONNECT_PAUSE: Duration = Duration::from_millis(100);

#[derive(Args, Debug)]
pub struct ClientArgs {
    /// The broker: `unix:/PATH` or `tcp:HOST:PORT`.
    #[arg(long)]
    pub connect: String,
    /// The session key, `{engine}:{native_id}`.
    #[arg(long)]
    pub key: String,
    /// Launch a new session on the first connect (`new=1`, never on a reconnect).
    #[arg(long)]
    pub new: bool,
    #[arg(long)]
    pub cwd: Option<String>,
    /// The claim pair: browser fingerprint (32 hex) and tab id (16 hex).
    #[arg(long, requires = "tab")]
    pub fp: Option<String>,
    #[arg(long, requires = "fp")]
    pub tab: Option<String>,
    /// The user asked to take the session over: the first connect sends `force=1`.
    #[arg(long)]
    pub take_over: bool,
    /// Give up after this many reconnects (so a test's client is bounded).
    #[arg(long, default_value_t = 100)]
    pub reconnects: u32,
}

/// Runs the viewer until the agent exits (exit 0), a refusal that a retry cannot
/// fix (exit 2), or `--reconnects` drops (exit 1).
pub fn run(a: &ClientArgs) -> i32 {
    let transport = match a.connect.split_once(':') {
        Some(("unix", path)) if path.starts_with('/') => Transport::Unix(path.into()),
        Some(("tcp", addr)) if !addr.is_empty() => Transport::Tcp(addr.to_owned()),
        _ => {
            eprintln!("vxbroker client: --connect is unix:/PATH or tcp:HOST:PORT");
            return 2;
        }
    };
    let Some((engine, id)) = a
        .key
        .split_once(':')
        .filter(|(e, i)| !e.is_empty() && !i.is_empty())
    else {
        eprintln!("vxbroker client: key.no_separator: a key is {{engine}}:{{native_id}}");
        return 2;
    };
    let opts = Options {
        transport,
        engine: engine.to_owned(),
        id: id.to_owned(),
        new: a.new,
        cwd: a.cwd.clone(),
        claim: a.fp.clone().zip(a.tab.clone()),
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => {
            eprintln!("vxbroker client: cannot start its runtime");
            return 1;
        }
    };
    rt.block_on(view(Client::new(opts), a))
}

async fn view(mut client: Client, a: &ClientArgs) -> i32 {
    let mut force = a.take_over;
    let mut reconnects = 0;
    loop {
        let opened = if force {
            client.take_over().await
        } else {
            client.connect().await
        };
        // One take-over is what the user asked for; every later connect is automatic.
        force = negative::is(Defect::ClientForces);
        match opened {
            Ok(()) => {
                if let Some(code) = stream(&mut client).await {
                    return code;
                }
            }
            Err(ClientError::Refused { status, code }) if (400..500).contains(&status) => {
                eprintln!(
                    "vxbroker client: refused with HTTP {status} ({})",
                    code.as_deref().unwrap_or("no code")
                );
                return 2;
            }
            Err(_) => {}
        }
        reconnects += 1;
        if reconnects > a.reconnects {
            eprintln!("vxbroker client: gave up after {} reconnects", a.reconnects);
            return 1;
        }
        tokio::time::sleep(RECONNECT_PAUSE).await;
    }
}

/// Streams one connection; `Some(exit code)` when the session ended for good,
/// `None` when the connection dropped and the client should reconnect.
async fn stream(client: &mut Client) -> Option<i32> {
    let mut stdout = std::io::stdout();
    loop {
        match client.next().await {
            Event::Output(bytes) => {
                let _ = stdout.write_all(&bytes);
                let _ = stdout.flush();
            }
            // The agent exited (the route's normal close).
            Event::Closed(Some(1000)) => return Some(0),
            Event::Closed(_) => return None,
            Event::Seq { .. } | Event::Role { .. } | Event::Id(_) | Event::Pong => {}
        }
    }
}
