// prove-it __VERSION__: the end-of-turn gate for OpenCode. When the agent
// ends a step with text and no tool call, this runs `prove-it hook --agent
// opencode text-complete`; while the repository's verify.sh fails, the
// failure is sent to the agent as a new message of the same session (three
// times at most, then the turn ends with a warning).
// Written by `prove-it setup opencode`: run it again to update this file, or
// after prove-it moves. `prove-it doctor` checks it.
import { spawn } from "node:child_process";

const PROVE_IT = "__PROVE_IT__";

const FAILED = {
  start: "this session is NOT gated as it should be",
  turn: "the attempt count was not reset",
  stop: "this turn was NOT verified",
};

// Runs one hook; every failure becomes a `say` the person sees.
function hook(event, input, failed) {
  return new Promise((resolve) => {
    let done = false;
    const end = (answer) => {
      if (!done) {
        done = true;
        resolve(answer);
      }
    };
    const error = (why) =>
      end({ say: `prove-it: gate error: ${why}; ${failed}. Run \`prove-it setup opencode\` again, then \`prove-it doctor\`.` });
    let out = "";
    let err = "";
    let child;
    try {
      child = spawn(PROVE_IT, ["hook", "--agent", "opencode", event], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      return error(`cannot run ${PROVE_IT}: ${e}`);
    }
    child.on("error", (e) => error(`cannot run ${PROVE_IT}: ${e.message}`));
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code, signal) => {
      if (code !== 0) return error(`${PROVE_IT} ended with ${signal ?? `exit ${code}`}: ${err.trim()}`);
      if (err.trim()) process.stderr.write(err);
      if (!out.trim()) return end({});
      try {
        end(JSON.parse(out));
      } catch {
        error(`its answer is not JSON: ${out.trim().slice(0, 200)}`);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

// The TUI runs plugins in a worker of its own, and text written to its
// stderr lands across the screen: there the toast is what the person sees.
const IN_TUI = process.argv.some((a) => /\/tui\/worker\.[jt]s$/.test(a));
const stderr = (text) => IN_TUI || process.stderr.write(`${text}\n`);

export const ProveIt = async ({ client, directory }) => {
  // `opencode run` prints a plugin's stderr; the TUI shows a toast.
  const say = async (text) => {
    if (!text) return;
    stderr(text);
    try {
      await client.tui.showToast({ body: { message: text, variant: "warning" } });
    } catch {}
  };
  const guarded = async (failed, body) => {
    try {
      await body();
    } catch (e) {
      await say(`prove-it: gate error: ${e}; ${failed}. Run \`prove-it doctor\` in the repository to see why.`);
    }
  };
  const text = (parts) => (parts ?? []).filter((p) => p?.type === "text").map((p) => p.text).join("\n");

  return {
    event: ({ event }) =>
      event?.type !== "session.created"
        ? undefined
        : guarded(FAILED.start, async () => {
            const input = { session_id: event.properties?.info?.id, cwd: directory, reason: "startup" };
            await say((await hook("session-start", input, FAILED.start)).say);
          }),

    // A prompt starts a turn, unless it is the gate's own block (the gate
    // knows its text).
    "chat.message": (input, output) =>
      guarded(FAILED.turn, async () => {
        const sent = { session_id: input.sessionID, cwd: directory, prompt: text(output?.parts) };
        await say((await hook("chat-message", sent, FAILED.turn)).say);
      }),

    "experimental.text.complete": (input, output) =>
      guarded(FAILED.stop, async () => {
        // A step whose text comes with a tool call is not the end of the turn.
        const message = (await client.session.message({ path: { id: input.sessionID, messageID: input.messageID } }))?.data;
        if ((message?.parts ?? []).some((p) => p?.type === "tool")) return;
        const sent = { session_id: input.sessionID, cwd: directory, claim: output?.text };
        const answer = await hook("text-complete", sent, FAILED.stop);
        await say(answer.say);
        if (!answer.block) return;
        stderr(answer.block.split("\n")[0]);
        // Stored before this hook returns (`noReply`: the running loop, not a
        // new one, answers it), so the loop sees a user message newer than its
        // answer and goes on instead of ending the turn. It keeps the turn's
        // model and agent; the gate knows it by its text, not as a new turn.
        const info = message?.info ?? {};
        const model = info.providerID && info.modelID ? { providerID: info.providerID, modelID: info.modelID } : undefined;
        await client.session.prompt({
          path: { id: input.sessionID },
          body: { noReply: true, model, agent: info.agent ?? info.mode, parts: [{ type: "text", text: answer.block }] },
        });
      }),
  };
};
