//! The `mds` binary: serves and administers the market-data API. All the
//! work is in [`cli`]; this file only runs it and turns an error into a
//! one-line reason and a non-zero exit.

mod cli;

use std::process::ExitCode;

/// The allocator: mimalloc, which gives the system back what a thread
/// freed. glibc's malloc kept it in the freeing thread's arena, so an
/// import that freed its parse and then laid out a catalog peaked at both
/// (`mds import exchanges` of a million companies: BENCHMARKS.md, "Import
/// memory of the identity steps").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    mds_node::metrics::set_build_commit(env!("MDS_BUILD_COMMIT"));
    let args = cli::Cli::from_env();
    // Held to the end: its drop writes out the last lines of the log.
    let _log = cli::logging::init(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`mds keys list | head`): not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One line: the error and its causes, joined.
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("error: {}", chain.join(": "));
            ExitCode::from(cli::exit_code(&e))
        }
    }
}
