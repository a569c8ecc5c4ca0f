//! `vxbroker`: see `vx_broker::cli`.

fn main() {
    let code = vx_broker::cli::run(std::env::args_os(), &mut std::io::stdout().lock());
    std::process::exit(code);
}
