// A server's, tool's, resource's or prompt's own icon (MCP `icons`, passed by the sidecar as
// data: images and https: addresses only) as a VS Code icon path, one per colour theme kind;
// undefined when there is none to show (the caller keeps its theme icon).
import * as vscode from "vscode";
import type * as P from "./protocol";
import { pickIcon } from "./serverAsks";

function uri(src: string | undefined): vscode.Uri | undefined {
  if (!src) return undefined;
  try {
    return vscode.Uri.parse(src, true);
  } catch {
    return undefined;
  }
}

export function iconPath(icons: P.Icon[] | undefined): { light: vscode.Uri; dark: vscode.Uri } | undefined {
  const light = uri(pickIcon(icons, "light"));
  const dark = uri(pickIcon(icons, "dark"));
  return light && dark ? { light, dark } : undefined;
}
