//! `rulebench man [COMMAND…]`: the man page of rulebench or of one command (roff:
//! `rulebench man evaluate | man -l -`).

use crate::cli::io::{Exit, Failure, usage, write_out};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  rulebench man | man -l -                  # rulebench(1)
  rulebench man evaluate | man -l -         # rulebench-evaluate(1)
  rulebench man dataset import | man -l -   # rulebench-dataset-import(1)
  for c in $(rulebench man --list); do rulebench man $c > rulebench-$c.1; done")]
pub struct Args {
    /// The command (and subcommand) whose page to print [default: rulebench's own]
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// List the commands that have a page, one per line (subcommands joined by `-`)
    #[arg(long, conflicts_with = "command")]
    pub list: bool,
}

/// Renders the man page of `root` (the whole command line), or of the command
/// `args.command` names within it.
pub fn run(root: clap::Command, args: Args) -> Result<Exit, Failure> {
    let mut root = root;
    root.build();
    if args.list {
        let mut names = Vec::new();
        list(&root, "", &mut names);
        write_out(&(names.join("\n") + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut cmd = root.clone();
    let mut name = cmd.get_name().to_owned();
    for word in args.command.iter().flat_map(|w| w.split('-')) {
        let Some(sub) = cmd.find_subcommand(word).cloned() else {
            let names: Vec<&str> = cmd
                .get_subcommands()
                .map(|c| c.get_name())
                .filter(|n| *n != "help")
                .collect();
            return Err(usage(format!(
                "no command `{}` under `{name}` (commands: {})",
                crate::app::text::sanitize(word),
                names.join(", ")
            )));
        };
        name = format!("{name}-{}", sub.get_name());
        cmd = sub;
    }
    let cmd = cmd
        .name(clap::builder::Str::from(
            Box::leak(name.clone().into_boxed_str()) as &str,
        ))
        .display_name(name);
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| usage(format!("man page: {e}")))?;
    write_out(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Ok)
}

/// Every command with a page: `evaluate`, `dataset-import`, …
fn list(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
        let name = if prefix.is_empty() {
            sub.get_name().to_owned()
        } else {
            format!("{prefix}-{}", sub.get_name())
        };
        out.push(name.clone());
        list(sub, &name, out);
    }
}
