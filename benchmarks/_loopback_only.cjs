// Preloaded into mcp-hub by vs_mcp_hub.py (`node --require`). mcp-hub 4.2.1 starts its HTTP
// server with `app.listen(port, callback)`, which binds every interface, and has no option for
// the host. This makes a listen on a port with no host bind 127.0.0.1 only; the benchmark
// checks the listening socket in /proc/net/tcp{,6} before it sends anything.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
