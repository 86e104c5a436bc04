//! `rulebench completions`: a shell's completion script (commands, options and page ids).

use clap::ValueEnum;

use crate::cli::io::{Exit, Failure, write_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shell to complete in
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells `rulebench completions` writes for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// The registration script of a shell: it calls `rulebench` back to complete.
pub fn completion_script(shell: Shell) -> String {
    use clap_complete::env::EnvCompleter;
    let mut out = Vec::new();
    let (name, bin) = ("rulebench", "rulebench");
    let written = match shell {
        Shell::Bash => {
            clap_complete::env::Bash.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Zsh => {
            clap_complete::env::Zsh.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Fish => {
            clap_complete::env::Fish.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Powershell => {
            clap_complete::env::Powershell.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
        Shell::Elvish => {
            clap_complete::env::Elvish.write_registration("COMPLETE", name, bin, bin, &mut out)
        }
    };
    written.expect("writing to memory");
    String::from_utf8(out).expect("the scripts are UTF-8")
}

pub fn run(args: Args) -> Result<Exit, Failure> {
    write_text(&completion_script(args.shell))?;
    Ok(Exit::Ok)
}
