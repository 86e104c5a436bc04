//! `rulebench eval`: plain JSONLogic: apply --logic to --data and print the result

use serde_json::Value;

use crate::app::expr::read_json as parse_json;
use crate::cli::io::{Exit, Failure, MAX_RULE_FILE_BYTES, read_input, usage, write_json};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The JSONLogic to apply (- reads stdin)
    #[arg(long, value_name = "JSON|-")]
    pub logic: String,
    /// The data it reads (- reads stdin)
    #[arg(long, value_name = "JSON|-", default_value = "null")]
    pub data: String,
}

pub fn run(args: Args) -> Result<Exit, Failure> {
    let Args { logic, data } = args;
    if logic == "-" && data == "-" {
        return Err(usage("--logic and --data cannot both read stdin (-)"));
    }
    let stdin = |text: String| -> Result<String, Failure> {
        if text == "-" {
            read_input(std::io::stdin(), "<stdin>", MAX_RULE_FILE_BYTES * 64)
        } else {
            Ok(text)
        }
    };
    let (logic, data) = (stdin(logic)?, stdin(data)?);
    let parse = |name: &str, text: &str| {
        parse_json::<Value>(text).map_err(|d| usage(format!("--{name}: {d}")))
    };
    let (logic, data) = (parse("logic", &logic)?, parse("data", &data)?);
    let result =
        crate::app::expr::eval(&logic, &data).map_err(|e| usage(format!("--logic: {e}")))?;
    write_json(&format!("{result}\n"))?;
    Ok(Exit::Ok)
}
