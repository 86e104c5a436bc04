use clap::Parser;
use rulebench::cli::{self, Cli, Exit};

fn main() -> anyhow::Result<()> {
    let mut cli = Cli::parse();
    let Some(command) = cli.command.take() else {
        // The workbench TUI comes with its own issue; until then, list the pages.
        eprintln!("the workbench TUI is not built yet; showing the pages (see `rulebench --help`)");
        let code = report(cli::run(cli, cli::Command::Pages { json: false }));
        std::process::exit(code);
    };
    let code = report(cli::run(cli, command));
    std::process::exit(code);
}

fn report(outcome: Result<Exit, cli::Failure>) -> i32 {
    match outcome {
        Ok(Exit::Ok) => 0,
        Ok(Exit::Problems) => 1,
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            failure.code
        }
    }
}
