// @ts-check
// meeting-reminders: a desktop notification shortly before each meeting.
//
// Every 5 minutes keep looks at your calendar ([connectors.calendar]: url
// and account) for meetings starting within the next LEAD_MINUTES. Each one
// becomes an input, `Meeting "Design review" at 10:00 UTC`, and one
// reminder (a desktop notification through notify-send, and the bell and a
// toast in keep's TUI if it is open; with neither it waits in Attention). Every
// occurrence of a recurring meeting is reminded on its own; a meeting moved
// to another time is reminded again at its new time. All-day events are
// left alone.

const LEAD_MINUTES = 15;

// The UTC hour and minute of an RFC 3339 time, "10:00 UTC".
function clock(iso) {
  return `${iso.slice(11, 16)} UTC`;
}

export default Keep.workflow({
  name: "meeting-reminders",

  topics: {
    "meeting.soon": {},
  },

  producers: {
    lookAhead: {
      publishes: ["meeting.soon"],
      schedule: { interval: "5m" },
      handler: async (ctx) => {
        const now = (await ctx.system.now()).unix * 1000;
        const until = now + LEAD_MINUTES * 60 * 1000;
        // to is exclusive: one second more takes in a meeting at exactly until
        const events = await ctx.calendar.events({
          from: new Date(now).toISOString(),
          to: new Date(until + 1000).toISOString(),
        });
        for (const ev of events) {
          const start = Date.parse(ev.start);
          // events() also lists meetings already running; those are too late
          if (ev.allDay || start < now || start > until) continue;
          // one reminder per occurrence and start time
          const id = `${ev.uid}@${ev.start}`;
          const inputId = ctx.registerInput({
            source: "calendar",
            type: "event",
            id,
            title: `Meeting "${ev.summary}" at ${clock(ev.start)}`,
          });
          await ctx.publish("meeting.soon", {
            messageId: id,
            inputId,
            payload: { summary: ev.summary, start: ev.start, location: ev.location },
          });
        }
      },
    },
  },

  consumers: {
    remind: Keep.consumer({
      subscribe: ["meeting.soon"],

      async prepare(ctx) {
        const [ev] = await ctx.peek("meeting.soon", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        const m = ev.payload;
        return {
          reservations: [{ topic: "meeting.soon", ids: [ev.messageId] }],
          data: {
            title: `${m.summary} at ${clock(m.start)}`,
            body: m.location ? `in ${m.location}` : "starts soon",
          },
          ui: { title: `Remind me of "${m.summary}" at ${clock(m.start)}` },
        };
      },

      async mutate(ctx, prepared) {
        await ctx.notify.send({ title: prepared.data.title, body: prepared.data.body });
      },

      async next(ctx, prepared, result) {
        if (result.status === "skipped") console.log(`no reminder for ${prepared.data.title}`);
      },
    }),
  },
});
