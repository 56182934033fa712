// prove-it __VERSION__: the end-of-turn gate for pi. When the agent wants to
// end its run, this runs `prove-it hook --agent pi agent-before-settle`; while
// the repository's verify.sh fails, the agent is sent back with the failure
// (three times at most, then the turn ends with a warning).
// Written by `prove-it setup pi`: run it again to update this file, or after
// prove-it moves. `prove-it doctor` checks it.
import { spawn } from "node:child_process";

const PROVE_IT = "__PROVE_IT__";

type Answer = { block?: string; say?: string };

// Runs one hook; every failure becomes a `say` the person sees.
function hook(event: string, input: object, failed: string): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    const end = (answer: Answer) => {
      if (!done) {
        done = true;
        resolve(answer);
      }
    };
    const error = (why: string) =>
      end({ say: `prove-it: gate error: ${why}; ${failed}. Run \`prove-it setup pi\` again, then \`prove-it doctor\`.` });
    let out = "";
    let err = "";
    let child;
    try {
      child = spawn(PROVE_IT, ["hook", "--agent", "pi", event], { stdio: ["pipe", "pipe", "pipe"] });
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

function say(ctx: any, text: string | undefined) {
  if (!text) return;
  if (ctx.hasUI) ctx.ui.notify(text, "warning");
  else process.stderr.write(`${text}\n`);
}

// The agent's last words: the text of the last assistant message.
function claim(messages: any[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "assistant") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content))
      return m.content.filter((p: any) => p?.type === "text").map((p: any) => p.text).join("\n");
  }
  return undefined;
}

const FAILED = {
  start: "this session is NOT gated as it should be",
  turn: "the attempt count was not reset",
  stop: "this turn was NOT verified",
};

// A handler that throws would be reported by pi as an extension error and
// the run would go on: said as a gate error instead.
async function guarded(ctx: any, failed: string, body: () => Promise<any>) {
  try {
    return await body();
  } catch (e) {
    say(ctx, `prove-it: gate error: ${e}; ${failed}. Run \`prove-it doctor\` in the repository to see why.`);
  }
}

export default function (pi: any) {
  const base = (ctx: any) => ({ session_id: ctx.sessionManager.getSessionId(), cwd: ctx.cwd });

  pi.on("session_start", (event: any, ctx: any) =>
    guarded(ctx, FAILED.start, async () => {
      say(ctx, (await hook("session-start", { ...base(ctx), reason: event.reason }, FAILED.start)).say);
    }),
  );

  pi.on("before_agent_start", (event: any, ctx: any) =>
    guarded(ctx, FAILED.turn, async () => {
      say(ctx, (await hook("before-agent-start", { ...base(ctx), prompt: event.prompt }, FAILED.turn)).say);
    }),
  );

  pi.on("agent_before_settle", (event: any, ctx: any) =>
    guarded(ctx, FAILED.stop, async () => {
      if (event.outcome !== "completed") {
        // pi cannot continue an aborted or failed run; the next run's end checks this work.
        say(ctx, `prove-it: this run ended ${event.outcome === "aborted" ? "aborted" : "in an error"}, so it was NOT verified; the next turn's end checks its changes.`);
        return;
      }
      const input = { ...base(ctx), claim: claim(event.context?.llmMessages ?? []) };
      const answer = await hook("agent-before-settle", input, FAILED.stop);
      say(ctx, answer.say);
      if (!answer.block) return;
      // Headless, the person sees only stderr: the block's first line goes there.
      if (!ctx.hasUI) process.stderr.write(`${answer.block.split("\n")[0]}\n`);
      return {
        entries: [...event.entries, { type: "custom_message", customType: "prove-it", content: answer.block, display: true }],
        continue: true,
      };
    }),
  );
}
