// @ts-check
// big-files-notify: tell me when a large file lands in my downloads.
//
// Every 5 minutes keep lists downloads/ under your files root (~/Keep by
// default). Each file is an input, "File report.pdf (12.4 MB)". A file of
// LIMIT_MB or more becomes a desktop notification (through notify-send, and
// the bell and a toast in keep's TUI if it is open); a smaller one is
// looked at and left alone: it shows as done, no changes. Each notification asks you first, like every change, until you
// answer one with always (A) or run keep grant big-files-notify notify.send.

const DIR = "downloads";
const LIMIT_MB = 10;

function megabytes(size) {
  return Math.round((size / (1024 * 1024)) * 10) / 10;
}

export default Keep.workflow({
  name: "big-files-notify",

  topics: {
    "file.landed": {},
  },

  producers: {
    watchDownloads: {
      publishes: ["file.landed"],
      schedule: { interval: "5m" },
      handler: async (ctx) => {
        const files = await ctx.files.list({ dir: DIR });
        for (const f of files) {
          const inputId = ctx.registerInput({
            source: "files",
            type: "file",
            id: f.path,
            title: `File ${f.name} (${megabytes(f.size)} MB)`,
          });
          await ctx.publish("file.landed", {
            messageId: f.path,
            inputId,
            payload: { name: f.name, size: f.size },
          });
        }
      },
    },
  },

  consumers: {
    tellMe: Keep.consumer({
      subscribe: ["file.landed"],

      async prepare(ctx) {
        const [ev] = await ctx.peek("file.landed", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        const mb = megabytes(ev.payload.size);
        return {
          reservations: [{ topic: "file.landed", ids: [ev.messageId] }],
          data: { name: ev.payload.name, mb, big: mb >= LIMIT_MB },
          ui: { title: `Notify: ${ev.payload.name} is ${mb} MB` },
        };
      },

      // small files need no change: mutate calls nothing and next sees "none"
      async mutate(ctx, prepared) {
        if (!prepared.data.big) return;
        await ctx.notify.send({
          title: `Large download: ${prepared.data.name}`,
          body: `${prepared.data.name} is ${prepared.data.mb} MB`,
        });
      },

      async next(ctx, prepared, result) {
        if (result.status === "applied") console.log(`notified about ${prepared.data.name}`);
        if (result.status === "skipped") console.log(`you chose not to be told about ${prepared.data.name}`);
      },
    }),
  },
});
