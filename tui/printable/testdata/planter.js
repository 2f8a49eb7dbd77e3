// Plants terminal control sequences everywhere a script reaches: input
// titles, message ids, payloads, console lines, the approval's title and
// parameters. EVIL clears the screen, sets the window title, writes the
// clipboard (OSC 52), rings the bell, moves the cursor up and erases the
// line, and adds a C1 CSI and DEL, then characters that hide or reorder
// text (bidi, zero-width, format, a tag). Used by the CLI and TUI tests.
const EVIL = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[1A\x1b[2K\u009b31m\x7f" +
  "\u202e\u2066\u200b\u061c\ufeff\u2028\u00ad\uDB40\uDC41";
export default Keep.workflow({
  name: "planter",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    console.log("log " + EVIL);
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x" + EVIL, title: "title " + EVIL });
    await ctx.publish("t", { messageId: "m" + EVIL, inputId: id, payload: { p: "payload " + EVIL } });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {}, ui: { title: "approve " + EVIL } } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.files.append({ path: "out" + EVIL + ".txt", content: "param " + EVIL }); },
    async next() {} }) },
});
