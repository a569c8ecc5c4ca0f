//! `vxcert store list` (being built: issue 3).
#[derive(clap::Args, Debug)]
pub struct StoreListArgs {}

pub fn run_store_list(_args: &StoreListArgs) -> i32 {
    eprintln!("vxcert store list: not built yet");
    2
}
