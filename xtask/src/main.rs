//! Project automation, run as `cargo xtask <command>`.

mod build_ptx;
mod ptxas;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ccoll project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Builds codec-kernels as PTX for each architecture (nightly, -Zbuild-std=core) and
    /// checks it with ptxas, printing each kernel's registers, spills and shared memory.
    BuildPtx(build_ptx::Args),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::BuildPtx(args) => build_ptx::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}
