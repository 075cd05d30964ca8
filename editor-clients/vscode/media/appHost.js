// The MCP App panel's page (a VS Code webview): relays JSON-RPC between the app's sandboxed
// frame (`sandbox="allow-scripts"`: an opaque origin, no access to this page or to the VS Code
// API) and the extension, which holds the bridge (src/appBridge.ts). It also reports what the
// bridge tells the app about its place: the panel's size, the theme and VS Code's colours as
// MCP Apps' style variables. Loaded from the extension (not inline): the frame inherits this
// page's Content Security Policy, whose 'unsafe-inline' a nonce would switch off.
(() => {
  const vscode = acquireVsCodeApi();
  const frame = document.getElementById("app");
  const status = document.getElementById("status");

  // MCP Apps' variables from the workbench theme's (the webview gets them as --vscode-*).
  const VARIABLES = {
    "--color-background-primary": "--vscode-editor-background",
    "--color-background-secondary": "--vscode-sideBar-background",
    "--color-background-tertiary": "--vscode-input-background",
    "--color-text-primary": "--vscode-editor-foreground",
    "--color-text-secondary": "--vscode-descriptionForeground",
    "--color-text-danger": "--vscode-errorForeground",
    "--color-text-warning": "--vscode-editorWarning-foreground",
    "--color-text-info": "--vscode-textLink-foreground",
    "--color-border-primary": "--vscode-panel-border",
    "--color-border-secondary": "--vscode-widget-border",
    "--color-ring-primary": "--vscode-focusBorder",
    "--font-sans": "--vscode-font-family",
    "--font-mono": "--vscode-editor-font-family",
    "--font-text-md-size": "--vscode-font-size",
  };

  function context() {
    const style = getComputedStyle(document.documentElement);
    const variables = {};
    for (const [name, source] of Object.entries(VARIABLES)) {
      const value = style.getPropertyValue(source).trim();
      if (value) variables[name] = value;
    }
    const classes = document.body.classList;
    const light = classes.contains("vscode-light") || classes.contains("vscode-high-contrast-light");
    return {
      theme: light ? "light" : "dark",
      variables,
      width: Math.round(frame.clientWidth),
      height: Math.round(window.innerHeight),
    };
  }

  window.addEventListener("message", (event) => {
    if (event.source === frame.contentWindow) {
      // The app: any JSON-RPC it sends goes to the bridge, which checks it.
      vscode.postMessage({ kind: "app", message: event.data });
      return;
    }
    // The extension's messages come from VS Code's webview host, of this page's origin; the
    // app's origin is opaque and a frame it may nest has its own.
    if (event.origin !== window.origin) return;
    const data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.kind === "load") {
      status.textContent = data.status;
      frame.srcdoc = data.html;
    } else if (data.kind === "app") {
      frame.contentWindow?.postMessage(data.message, "*");
    } else if (data.kind === "resize" && typeof data.height === "number") {
      frame.style.height = `${Math.max(data.height, window.innerHeight - frame.offsetTop)}px`;
    }
  });

  let pending = false;
  function report() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      vscode.postMessage({ kind: "context", context: context() });
    });
  }
  new ResizeObserver(report).observe(document.body);
  new MutationObserver(report).observe(document.body, { attributes: true, attributeFilter: ["class"] });
  vscode.postMessage({ kind: "ready", context: context() });
})();
