// @ts-check
// demo: keep's first-run tour, entirely offline.
//
// Drop a .txt file into demo/inbox/ under your files root (~/Keep by
// default). Within a minute it shows up as an input, "Note <name>: "<first
// line>"". keep then proposes to write a short summary of it to
// demo/done/<name>; writing a file is a change to your machine, so keep asks
// you first (Attention pane: approve, approve always, or reject). Approve,
// and the summary appears and the input is done.

const INBOX = "demo/inbox";
const DONE = "demo/done";

function lines(text) {
  return text.split(/\r?\n/).map((l) => l.trim());
}

function firstLine(text) {
  const line = lines(text).find((l) => l !== "") ?? "";
  return line.length > 80 ? line.slice(0, 79) + "…" : line;
}

function summarize(name, note) {
  const text = note.content;
  const nonEmpty = lines(text).filter((l) => l !== "");
  const words = text.split(/\s+/).filter((w) => w !== "").length;
  return [
    `Summary of ${name}`,
    ``,
    `First line: ${firstLine(text) || "(empty)"}`,
    `Lines: ${nonEmpty.length}`,
    `Words: ${words}`,
    `Characters: ${text.length}`,
    `Last modified: ${note.modified}`,
    ``,
  ].join("\n");
}

export default Keep.workflow({
  name: "demo",

  topics: {
    "note.arrived": {},
  },

  producers: {
    watchInbox: {
      publishes: ["note.arrived"],
      schedule: { interval: "1m" },
      // Notes already seen are published again on every look; the host
      // deduplicates them by messageId (the path), so each note is handled once.
      handler: async (ctx, state) => {
        const notes = await ctx.files.list({ dir: INBOX, glob: "*.txt" });
        for (const note of notes) {
          const { content } = await ctx.files.read({ path: note.path });
          const inputId = ctx.registerInput({
            source: "files",
            type: "file",
            id: note.path,
            title: `Note ${note.name}: "${firstLine(content) || "(empty)"}"`,
          });
          await ctx.publish("note.arrived", {
            messageId: note.path,
            inputId,
            payload: { path: note.path, name: note.name },
          });
        }
        return { looks: (state?.looks ?? 0) + 1 };
      },
    },
  },

  consumers: {
    summarize: Keep.consumer({
      subscribe: ["note.arrived"],

      async prepare(ctx, state) {
        const [event] = await ctx.peek("note.arrived", { limit: 1 });
        if (!event) return { reservations: [], data: {} };
        const { path, name } = event.payload;
        const reservations = [{ topic: "note.arrived", ids: [event.messageId] }];
        // A note deleted since it arrived has nothing to summarize: the input
        // is done, with no external change.
        const still = await ctx.files.list({ dir: INBOX, glob: name.replace(/[*?[\\]/g, "\\$&") });
        if (still.length === 0) return { reservations, data: { name, gone: true } };
        const note = await ctx.files.read({ path });
        return {
          reservations,
          data: { name, out: `${DONE}/${name}`, summary: summarize(name, note), done: state?.done ?? 0 },
          ui: { title: `Write a summary of ${name} to ${DONE}/${name}` },
        };
      },

      async mutate(ctx, prepared) {
        if (prepared.data.gone) return;
        await ctx.files.write({ path: prepared.data.out, content: prepared.data.summary });
      },

      async next(ctx, prepared, mutationResult) {
        switch (mutationResult.status) {
          case "applied":
            console.log(`wrote ${mutationResult.result.path} (${mutationResult.result.size} bytes)`);
            return { done: prepared.data.done + 1 };
          case "skipped":
            console.log(`no summary of ${prepared.data.name}: the write was turned down`);
            return;
          case "none":
            if (prepared.data.gone) console.log(`${prepared.data.name} was deleted before it was summarized`);
            return;
        }
      },
    }),
  },
});
