// @ts-check
// digest-to-slack: one Slack message a day listing the new emails, posted
// at DIGEST_HOUR (the host's local time) instead of one message per email.
//
// Mail comes from the account of [connectors.mail] in the config; Slack from
// [connectors.slack] (the token from $KEEP_SLACK_TOKEN). Edit CHANNEL and
// DIGEST_HOUR. Emails that arrive after the day's digest wait for
// tomorrow's; on a day without new mail nothing is posted.

const CHANNEL = "#inbox-digest";
const DIGEST_HOUR = 9; // 0-23, local time
const MAILBOX = "INBOX";
const PAGE = 50;
const MAX_PER_DIGEST = 200;

function pad(n) {
  return String(n).padStart(2, "0");
}

// clock reads the host's clock: today's date, the hour, and the next time
// the digest is due, all in the host's own time zone.
async function clock(ctx) {
  const { iso } = await ctx.system.now(); // e.g. 2026-11-02T08:15:00+01:00
  const day = iso.slice(0, 10);
  const hour = Number(iso.slice(11, 13));
  const zone = iso.slice(19); // "Z" or "+01:00"
  let next = day;
  if (hour >= DIGEST_HOUR) {
    const [y, m, d] = day.split("-").map(Number);
    const t = new Date(Date.UTC(y, m - 1, d + 1));
    next = `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
  }
  return { day, hour, nextDigest: `${next}T${pad(DIGEST_HOUR)}:00:00${zone}` };
}

export default Keep.workflow({
  name: "digest-to-slack",

  topics: {
    "email.received": {},
  },

  producers: {
    pollMail: {
      publishes: ["email.received"],
      schedule: { interval: "15m" },
      // Cursor: the last UID seen, with the mailbox's UIDVALIDITY. An email's
      // identity is its Message-ID, so a renumbered mailbox read again from
      // the start brings nothing twice.
      handler: async (ctx, state) => {
        let cursor = state?.cursor ?? 0;
        let uidValidity = state?.uidValidity ?? null;
        for (let page = 0; page < 10; page++) {
          const res = await ctx.gmail.search({ mailbox: MAILBOX, after: cursor, limit: PAGE });
          if (uidValidity !== null && res.uidValidity !== uidValidity) {
            cursor = 0;
            uidValidity = res.uidValidity;
            continue;
          }
          uidValidity = res.uidValidity;
          for (const email of res.messages) {
            const id = email.messageId || email.id;
            const inputId = ctx.registerInput({
              source: "gmail",
              type: "email",
              id,
              title: `Email from ${email.from}: "${email.subject}"`,
            });
            await ctx.publish("email.received", {
              messageId: id,
              inputId,
              payload: { from: email.from, subject: email.subject, date: email.date },
            });
          }
          cursor = res.cursor;
          if (res.messages.length < PAGE) break;
        }
        return { cursor, uidValidity };
      },
    },
  },

  consumers: {
    postDigest: Keep.consumer({
      subscribe: ["email.received"],

      // New mail wakes this consumer at once; before the digest hour (or once
      // today's digest is out) it reserves nothing and sleeps until the next
      // digest time. At the digest hour it takes every pending email.
      async prepare(ctx, state) {
        const { day, hour, nextDigest } = await clock(ctx);
        const due = hour >= DIGEST_HOUR && state?.lastDay !== day;
        if (!due) return { reservations: [], data: {}, wakeAt: nextDigest };

        const pending = await ctx.peek("email.received", { limit: MAX_PER_DIGEST });
        if (pending.length === 0) {
          // Nothing came in: no post today, and mail arriving later waits for tomorrow.
          return { reservations: [], data: { day }, wakeAt: nextDigest };
        }
        const lines = pending.map((e) => `• ${e.payload.from}: ${e.payload.subject}`);
        const n = pending.length;
        const text = `Mail digest for ${day}: ${n} new email${n === 1 ? "" : "s"}\n` + lines.join("\n");
        return {
          reservations: [{ topic: "email.received", ids: pending.map((e) => e.messageId) }],
          data: { day, text, count: n },
          ui: { title: `Post the digest of ${n} email${n === 1 ? "" : "s"} to ${CHANNEL}` },
          wakeAt: nextDigest,
        };
      },

      async mutate(ctx, prepared) {
        if (!prepared.data.text) return;
        await ctx.slack.post({ channel: CHANNEL, text: prepared.data.text });
      },

      async next(ctx, prepared, mutationResult) {
        switch (mutationResult.status) {
          case "applied":
            return { lastDay: prepared.data.day, lastCount: prepared.data.count, lastTs: mutationResult.result.ts };
          case "skipped":
            // Turned down, or an uncertain post the user chose to skip: these
            // emails are done, and today's digest is over.
            console.log(`the digest for ${prepared.data.day} was skipped`);
            return { lastDay: prepared.data.day, lastCount: 0 };
          case "none":
            // At the digest hour with nothing to post, today is done; before
            // it, the state stays as it is.
            if (prepared.data.day) return { lastDay: prepared.data.day, lastCount: 0 };
            return;
        }
      },
    }),
  },
});
