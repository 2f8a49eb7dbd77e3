// Fails with an error carrying terminal control sequences (see planter.js).
const EVIL = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[1A\x1b[2K\u009b31m\x7f" +
  "\u202e\u2066\u200b\u061c\ufeff\u2028\u00ad\uDB40\uDC41";
export default Keep.workflow({
  name: "thrower",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => { throw new Error("error " + EVIL); } } },
});
