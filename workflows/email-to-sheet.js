// @ts-check
// email-to-sheet: every email whose subject mentions an invoice becomes a
// row of invoices.csv: date, sender, subject.
//
// Mail comes from the account of [connectors.mail] in the config (Gmail by
// default; the password from $KEEP_MAIL_PASSWORD). invoices.csv lives under
// the first root of [connectors.sheets] (~/Keep by default) and is created,
// with its header, on the first row. Change SUBJECT to file other mail, or
// set it to "" to file every email.

const MAILBOX = "INBOX";
const SUBJECT = "invoice";
const SHEET = "invoices.csv";
const HEADER = ["date", "from", "subject"];
const PAGE = 50;

export default Keep.workflow({
  name: "email-to-sheet",

  topics: {
    "email.received": {},
  },

  producers: {
    pollMail: {
      publishes: ["email.received"],
      schedule: { interval: "5m" },
      // The cursor is the mailbox's last UID seen, valid only with its
      // UIDVALIDITY: if the server renumbers the mailbox, start over. An
      // email's identity is its Message-ID header, which survives a
      // renumbering, so reading the mailbox again files nothing twice.
      handler: async (ctx, state) => {
        let cursor = state?.cursor ?? 0;
        let uidValidity = state?.uidValidity ?? null;
        for (let page = 0; page < 10; page++) {
          const res = await ctx.gmail.search({ mailbox: MAILBOX, after: cursor, subject: SUBJECT, limit: PAGE });
          if (uidValidity !== null && res.uidValidity !== uidValidity) {
            cursor = 0; // the mailbox was renumbered: read it again from the start
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
          if (res.messages.length < PAGE) break; // that was the last page
        }
        return { cursor, uidValidity };
      },
    },
  },

  consumers: {
    addRow: Keep.consumer({
      subscribe: ["email.received"],

      // One email per run, oldest first: one run, one row.
      async prepare(ctx, state) {
        const [event] = await ctx.peek("email.received", { limit: 1 });
        if (!event) return { reservations: [], data: {} };
        const { from, subject, date } = event.payload;
        return {
          reservations: [{ topic: "email.received", ids: [event.messageId] }],
          data: { values: [date ?? "", from ?? "", subject ?? ""], from, rows: state?.rows ?? 0 },
          ui: { title: `Add row for ${from} to ${SHEET}` },
        };
      },

      async mutate(ctx, prepared) {
        await ctx.sheets.appendRow({ spreadsheet: SHEET, header: HEADER, values: prepared.data.values });
      },

      async next(ctx, prepared, mutationResult) {
        switch (mutationResult.status) {
          case "applied":
            return { rows: prepared.data.rows + 1, lastRow: mutationResult.result.rowNumber };
          case "skipped":
            console.log(`the row for ${prepared.data.from} was skipped`);
            return;
          case "none":
            return; // nothing was pending
        }
      },
    }),
  },
});
