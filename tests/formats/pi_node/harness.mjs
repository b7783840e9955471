// Drives pi's own SessionManager (@mariozechner/pi-coding-agent, pinned in package.json)
// for Forkwise's tests. Usage: node harness.mjs <command> ...; prints one JSON document.
//   scenario <sessionDir> <cwd> <forkDir> <forkCwd>   sessions written by pi's own writer
//   open <file>                                        SessionManager.open + buildSessionContext
//   migrate <file>                                     pi's upgrade of an old file, in memory
//   continue <file> <prompt>                           pi appends a turn to an existing file
// PI_MODULES names the folder holding node_modules (installed by tests/formats/pi_node.py).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.PI_MODULES;
const pkg = join(modules, "node_modules", "@mariozechner", "pi-coding-agent");
const sm = await import(pathToFileURL(join(pkg, "dist", "core", "session-manager.js")).href);
const { SessionManager, buildSessionContext, migrateSessionEntries, parseSessionEntries } = sm;

let clock = Date.parse("2026-01-05T10:00:00.000Z");
const tick = () => (clock += 1000);
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: tick() });
const assistant = (content, stopReason, model = "claude-sonnet-4-5") => ({
  role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model,
  usage, stopReason, timestamp: tick() });
const text = (t) => ({ type: "text", text: t });
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (id, name, t, isError = false) => ({
  role: "toolResult", toolCallId: id, toolName: name, content: [text(t)], isError, timestamp: tick() });

function scenario(sessionDir, cwd, forkDir, forkCwd) {
  const m = SessionManager.create(cwd, sessionDir);
  const ids = {};
  m.appendModelChange("anthropic", "claude-sonnet-4-5");
  m.appendThinkingLevelChange("high");
  ids.q1 = m.appendMessage(user("What does main.py do?"));
  ids.a1call = m.appendMessage(assistant([{ type: "thinking", thinking: "Read it first." },
    call("toolu_a", "read", { path: "main.py" })], "toolUse"));
  m.appendMessage(result("toolu_a", "read", "print('hi')"));
  ids.a1 = m.appendMessage(assistant([text("It prints hi.")], "stop"));
  m.appendSessionInfo("What main.py does");
  m.appendLabelChange(ids.a1, "answer");
  m.appendCustomEntry("notes", { n: 1 });
  m.appendMessage({ role: "bashExecution", command: "wc -l main.py", output: "1 main.py\n",
    exitCode: 0, cancelled: false, truncated: false, timestamp: tick() });
  ids.q2 = m.appendMessage(user("Make it print hello instead"));
  ids.a2 = m.appendMessage(assistant([call("toolu_b", "edit", { path: "main.py", old: "hi", new: "hello" })], "toolUse"));
  m.appendMessage(result("toolu_b", "edit", "permission denied", true));
  ids.a2end = m.appendMessage(assistant([text("I could not edit it.")], "error"));
  // a branch: back to the first answer, ask something else (the abandoned leaf stays)
  m.branch(ids.a1);
  ids.q3 = m.appendMessage(user("Explain it to a child"));
  ids.a3 = m.appendMessage(assistant([text("It says hi on the screen.")], "stop"));
  // another: back to the same answer with a summary of where we were, then continue there
  ids.summary = m.branchWithSummary(ids.a1, "The user asked for a simpler explanation.");
  ids.q4 = m.appendMessage(user("Add a test for it"));
  ids.a4 = m.appendMessage(assistant([text("Added test_main.py.")], "stop"));
  m.appendCompaction("Main prints hello; a test was added.", ids.q4, 12345);
  ids.q5 = m.appendMessage(user("Run the tests"));
  ids.a5 = m.appendMessage(assistant([text("Interrupted.")], "aborted"));
  const mainFile = m.getSessionFile();

  // pi's /fork of the abandoned branch into a file of its own
  const other = SessionManager.open(mainFile);
  const branchedFile = other.createBranchedSession(ids.a3);
  other.appendMessage(user("And to a teenager?"));
  other.appendMessage(assistant([text("It writes a greeting to stdout.")], "stop"));

  // `pi --fork <file>` into another project, then one more turn there
  const fork = SessionManager.forkFrom(mainFile, forkCwd, forkDir);
  fork.appendModelChange("openai", "gpt-5");
  fork.appendMessage(user("Port it to Rust"));
  fork.appendMessage(assistant([text("fn main() { println!(\"hello\"); }")], "stop", "gpt-5"));
  return { main: mainFile, branched: branchedFile, forked: fork.getSessionFile(), ids };
}

function describe(m) {
  const entries = m.getEntries();
  const parents = new Set(entries.map((e) => e.parentId));
  const leaves = entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
  // the context pi would build with the leaf moved to each leaf of the tree (/tree)
  const branches = Object.fromEntries(leaves.map((id) => [id, buildSessionContext(entries, id)]));
  return { header: m.getHeader(), leafId: m.getLeafId(), name: m.getSessionName() ?? null,
    entries: entries.length, leaves, context: m.buildSessionContext(), branches };
}

const [command, ...args] = process.argv.slice(2);
let out;
if (command === "scenario") {
  out = scenario(...args);
} else if (command === "open") {
  out = describe(SessionManager.open(args[0]));
} else if (command === "continue") {
  const m = SessionManager.open(args[0]);
  const before = m.getLeafId();
  const q = m.appendMessage(user(args[1]));
  m.appendMessage(assistant([text(`pi answers: ${args[1]}`)], "stop"));
  out = { before, parentOfPrompt: m.getEntry(q).parentId };
} else if (command === "migrate") {
  const entries = parseSessionEntries(readFileSync(args[0], "utf8"));
  migrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session");
  out = { header: entries[0], entries: body, context: buildSessionContext(body) };
} else {
  throw new Error(`unknown command ${command}`);
}
process.stdout.write(JSON.stringify(out));
