fn main() {
    std::process::exit(vxref::cli::main());
}
