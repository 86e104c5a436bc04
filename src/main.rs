use clap::Parser;
use rulebench::cli::{self, Cli, Exit};

fn main() {
    // `COMPLETE=bash rulebench …` (from the script `rulebench completions` prints):
    // answers the shell's completion request and exits.
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command).complete();
    // An empty `RULEBENCH_DB=` means unset (clap would refuse it as an empty path).
    if std::env::var_os("RULEBENCH_DB").is_some_and(|v| v.is_empty()) {
        // SAFETY: no other thread runs yet; nothing reads the environment meanwhile.
        unsafe { std::env::remove_var("RULEBENCH_DB") };
    }
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version print as clap writes them (nothing typed is echoed).
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // A usage error echoes what was typed: escaped, as every other message.
            eprint!(
                "{}",
                rulebench::app::text::sanitize_lines(&e.render().to_string())
            );
            std::process::exit(e.exit_code());
        }
    };
    let outcome = match cli.command.take() {
        Some(command) => cli::run(cli, command),
        None => cli::run_tui(cli),
    };
    std::process::exit(report(outcome));
}

fn report(outcome: Result<Exit, cli::Failure>) -> i32 {
    match outcome {
        Ok(Exit::Ok) => 0,
        Ok(Exit::Problems) => 1,
        Err(failure) => {
            // Messages carry stored ids, hints and echoed arguments: escaped.
            eprintln!(
                "error: {}",
                rulebench::app::text::sanitize_lines(&failure.message)
            );
            failure.code
        }
    }
}
