// Reads JSON Lines of {"logic": …, "data": …} on stdin and writes one line per case:
// {"ok": result} or {"error": message}, as json-logic-js evaluates it. The package is
// found through NODE_PATH (tests/jsonlogic_js.rs installs a pinned copy).
const jsonLogic = require("json-logic-js");
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
rl.on("line", (line) => {
  if (!line.trim()) return;
  const { logic, data } = JSON.parse(line);
  try {
    const r = jsonLogic.apply(logic, data);
    // JSON has no NaN or Infinity: say so rather than print null.
    if (typeof r === "number" && !Number.isFinite(r)) {
      out.push(JSON.stringify({ nonfinite: String(r) }));
    } else {
      out.push(JSON.stringify({ ok: r === undefined ? null : r }));
    }
  } catch (e) {
    out.push(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  }
});
rl.on("close", () => process.stdout.write(out.join("\n") + "\n"));
