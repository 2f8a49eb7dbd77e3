package benchmark

// The two Node-RED flows keep is measured beside (nodered.go), as Node-RED's
// flow files: INBOX, DONE and SINK are replaced before Node-RED starts.

// watchFlow POSTs each file a folder watch reports, once per name.
const watchFlow = `[
 {"id": "tab", "type": "tab", "label": "watch"},
 {"id": "w", "z": "tab", "type": "watch", "files": "INBOX", "recursive": false, "wires": [["f"]]},
 {"id": "f", "z": "tab", "type": "function", "name": "item", "outputs": 1, "libs": [], "wires": [["h"]],
  "func": "if (msg.type !== 'file') return null;\nconst seen = context.get('seen') || {};\nif (seen[msg.file]) return null;\nseen[msg.file] = true;\ncontext.set('seen', seen);\nmsg.payload = {id: msg.file};\nmsg.headers = {'content-type': 'application/json'};\nreturn msg;"},
 {"id": "h", "z": "tab", "type": "http request", "method": "POST", "ret": "txt", "url": "SINK", "persist": true, "wires": [[]]}
]`

// pollFlow lists the folder every 200 ms, POSTs each file not already
// under way, and moves it out of the folder after a 2xx.
const pollFlow = `[
 {"id": "tab", "type": "tab", "label": "poll"},
 {"id": "i", "z": "tab", "type": "inject", "repeat": "0.2", "once": true, "onceDelay": "0.1", "payload": "", "payloadType": "date", "wires": [["l"]]},
 {"id": "l", "z": "tab", "type": "function", "name": "list", "outputs": 1, "libs": [{"var": "fs", "module": "fs"}], "wires": [["h"]],
  "func": "const busy = context.get('busy') || {};\nfor (const name of fs.readdirSync('INBOX')) {\n  if (busy[name]) continue;\n  busy[name] = true;\n  node.send({file: name, payload: {id: name}, headers: {'content-type': 'application/json'}});\n}\ncontext.set('busy', busy);\nreturn null;"},
 {"id": "h", "z": "tab", "type": "http request", "method": "POST", "ret": "txt", "url": "SINK", "persist": true, "wires": [["m"]]},
 {"id": "m", "z": "tab", "type": "function", "name": "move", "outputs": 1, "libs": [{"var": "fs", "module": "fs"}], "wires": [[]],
  "func": "if (msg.statusCode >= 200 && msg.statusCode < 300) fs.renameSync('INBOX/' + msg.file, 'DONE/' + msg.file);\nreturn null;"}
]`

// noderedSettings is Node-RED's settings file: function nodes may load fs.
const noderedSettings = `module.exports = {
  uiPort: PORT,
  uiHost: "127.0.0.1",
  flowFile: "FLOW",
  userDir: "USERDIR",
  functionExternalModules: true,
  logging: { console: { level: "warn" } },
};
`
