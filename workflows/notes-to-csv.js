// @ts-check
// notes-to-csv: every note dropped into inbox/ becomes one line of
// notes-log.csv.
//
// Paths are relative to the first root of [connectors.files] in the config
// (~/Keep by default). Put a .txt file in ~/Keep/inbox/ and, within five
// minutes, a line "name,modified,first line,text" appears at the end of
// ~/Keep/notes-log.csv. Each note is logged once: its path is its identity,
// so editing a note does not log it again.

const INBOX = "inbox";
const PATTERN = "*.txt";
const LOG = "notes-log.csv";
const HEADER = "note,modified,title,text\n";

// firstLine is a note's title: its first non-empty line, shortened.
function firstLine(text) {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > 80 ? line.slice(0, 79) + "…" : line;
}

// glob matches exactly one file name: wildcards in the name are escaped.
function glob(name) {
  return name.replace(/[*?[\\]/g, "\\$&");
}

// csv quotes one field when it needs it (RFC 4180).
function csv(field) {
  const s = String(field);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

export default Keep.workflow({
  name: "notes-to-csv",

  topics: {
    "note.found": {},
  },

  producers: {
    scanInbox: {
      publishes: ["note.found"],
      schedule: { interval: "5m" },
      // The folder is its own cursor: listing it again re-publishes notes
      // already seen, which the host deduplicates by messageId (the path),
      // so a note is never logged twice. State only counts scans.
      handler: async (ctx, state) => {
        const notes = await ctx.files.list({ dir: INBOX, glob: PATTERN });
        for (const note of notes) {
          const { content } = await ctx.files.read({ path: note.path });
          const title = firstLine(content) || "(empty)";
          const inputId = ctx.registerInput({
            source: "files",
            type: "file",
            id: note.path,
            title: `Note ${note.name}: "${title}"`,
          });
          await ctx.publish("note.found", {
            messageId: note.path,
            inputId,
            payload: { path: note.path, name: note.name },
          });
        }
        return { scans: (state?.scans ?? 0) + 1, lastCount: notes.length };
      },
    },
  },

  consumers: {
    logNote: Keep.consumer({
      subscribe: ["note.found"],

      // One note per run, oldest first: one run, one appended line.
      async prepare(ctx, state) {
        const [event] = await ctx.peek("note.found", { limit: 1 });
        if (!event) return { reservations: [], data: {} };
        const { path, name } = event.payload;
        const reservations = [{ topic: "note.found", ids: [event.messageId] }];

        // A note deleted since it was found has nothing left to log: the
        // event is still consumed, with no external change.
        const still = await ctx.files.list({ dir: INBOX, glob: glob(name) });
        if (still.length === 0) {
          return { reservations, data: { name, gone: true } };
        }
        const note = await ctx.files.read({ path });
        const logExists = (await ctx.files.list({ dir: ".", glob: LOG })).length > 0;
        const text = note.content.replace(/\r?\n/g, " ").trim();
        const line = [name, note.modified, firstLine(note.content), text].map(csv).join(",") + "\n";
        return {
          reservations,
          data: { name, content: (logExists ? "" : HEADER) + line, logged: state?.logged ?? 0 },
          ui: { title: `Add ${name} to ${LOG}` },
        };
      },

      async mutate(ctx, prepared) {
        if (prepared.data.gone || !prepared.data.content) return; // nothing to log
        await ctx.files.append({ path: LOG, content: prepared.data.content });
      },

      async next(ctx, prepared, mutationResult) {
        switch (mutationResult.status) {
          case "applied":
            return { logged: prepared.data.logged + 1, last: prepared.data.name };
          case "skipped":
            // The user turned the line down (or skipped an uncertain append):
            // the note stays unlogged, and is not offered again.
            console.log(`${prepared.data.name} was skipped, not logged`);
            return;
          case "none":
            if (prepared.data.gone) console.log(`${prepared.data.name} was deleted before it could be logged`);
            return; // nothing pending, or nothing to do: state stays as it is
        }
      },
    }),
  },
});
