/**
 * The inspector's page: one HTML document with its style and script inline
 * (no library, nothing fetched but the inspector's own `/api/`), so it
 * ships inside the package and works offline. The script reads the runs,
 * the chosen turn's tree and the pending approvals, and reads them again
 * when `/api/events` says they changed. Every value from the data is put in
 * the page as text (`textContent`), never as markup.
 */

const style = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }
body { margin: 0; }
header { background: #1d2330; color: #fff; padding: 10px 18px; display: flex; gap: 16px; align-items: center; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; }
#live { font-size: 12px; opacity: .8; }
#live[data-state="open"]::before { content: "● "; color: #5fd38d; }
#live[data-state="closed"]::before { content: "● "; color: #e0a030; }
main { display: grid; grid-template-columns: minmax(520px, 1fr) minmax(520px, 1.2fr); grid-template-rows: auto auto auto 1fr; gap: 14px; padding: 14px; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 10px 12px; min-width: 0; }
section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #5b6475; margin: 0 0 8px; }
#inbox { grid-column: 1 / -1; }
#runs { grid-column: 1; grid-row: 2; align-self: start; }
#threads { grid-column: 1; grid-row: 3; align-self: start; }
#metrics { grid-column: 1; grid-row: 4; align-self: start; }
#metrics td { white-space: normal; font-size: 12px; }
#turn { grid-column: 2; grid-row: 2 / span 3; align-self: start; }
.message { font-size: 13px; padding: 2px 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th { text-align: left; color: #5b6475; font-weight: 500; border-bottom: 1px solid #dde1e8; padding: 4px 6px; }
td { padding: 4px 6px; border-bottom: 1px solid #eef0f4; white-space: nowrap; }
tr.turn { cursor: pointer; }
tr.turn:hover { background: #f0f4ff; }
tr.turn[aria-selected="true"] { background: #e2ebff; }
.status { font-weight: 600; }
.status[data-status="Completed"], .status[data-status="Ok"] { color: #1f7a44; }
.status[data-status="AwaitingApproval"] { color: #a66a00; }
.status[data-status="Failed"], .status[data-status="StepLimitReached"] { color: #b3261e; }
.muted { color: #7a8394; }
.node { display: grid; grid-template-columns: 46% 54%; align-items: center; cursor: pointer; padding: 2px 0; font-size: 13px; }
.node:hover { background: #f0f4ff; }
.node .label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.node .path { font-size: 11px; background: #eef0f4; border-radius: 3px; padding: 0 4px; margin-left: 6px; color: #46506a; }
.bar { position: relative; height: 12px; background: #f3f4f7; border-radius: 2px; }
.bar span { position: absolute; top: 0; height: 12px; border-radius: 2px; background: #6b8cff; min-width: 2px; }
.node[data-operation="chat"] .bar span { background: #9b6bff; }
.node[data-operation="execute_tool"] .bar span { background: #3fb27f; }
.node[data-status="2"] .bar span { background: #d9534f; }
pre { background: #f6f7f9; border: 1px solid #e4e7ec; border-radius: 4px; padding: 6px 8px; margin: 4px 0; font-size: 12px; white-space: pre-wrap; word-break: break-word; max-height: 260px; overflow: auto; }
#attributes table td { white-space: normal; word-break: break-word; vertical-align: top; }
.pending { border: 1px solid #f0d9a8; background: #fffaf0; border-radius: 6px; padding: 8px 10px; margin-bottom: 8px; }
.pending .what { font-weight: 600; }
.pending .agents { font-size: 12px; color: #46506a; }
.pending button { margin-right: 6px; padding: 3px 12px; border-radius: 4px; border: 1px solid #aab2c0; background: #fff; cursor: pointer; }
.pending button.approve { border-color: #1f7a44; color: #1f7a44; }
.pending button.reject { border-color: #b3261e; color: #b3261e; }
.outcome { font-size: 13px; margin-left: 6px; }
.outcome[data-kind="refused"] { color: #b3261e; }
.outcome[data-kind="recorded"] { color: #1f7a44; }
label { font-size: 13px; }
input { font: inherit; padding: 2px 6px; }
`

const script = `
const token = document.querySelector('meta[name="inspector-token"]').content;
const state = { selected: undefined, decided: new Map() };
const el = (tag, props, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    // Styles through the CSSOM: the page's CSP allows no inline style attributes.
    else if (key === "style") Object.assign(node.style, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
};
const get = async (path) => {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  return response.json();
};
const ms = (value) => (value < 1 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value).toString()) + " ms";
const time = (epoch) => new Date(epoch).toLocaleTimeString();
const tokens = (t) => {
  const parts = [t.input + " in", t.output + " out"];
  if (t.cached !== undefined && t.cached !== null) parts.push(t.cached + " cached");
  if (t.reasoning !== undefined && t.reasoning !== null) parts.push(t.reasoning + " reasoning");
  return parts.join(" · ");
};
const pretty = (text) => {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
};

async function loadRuns() {
  const { turns } = await get("/api/runs");
  const body = document.querySelector("#runs tbody");
  body.replaceChildren(...turns.map((turn) => {
    const selected = state.selected && state.selected.trace === turn.traceId && state.selected.span === turn.spanId;
    return el("tr", {
      class: "turn", "data-agent": turn.agent, "data-status": turn.status, "data-turn": turn.turnId,
      "aria-selected": selected ? "true" : "false",
      onclick: () => { state.selected = { trace: turn.traceId, span: turn.spanId }; loadRuns(); loadTurn(); }
    },
      el("td", { text: time(turn.startedAt), class: "muted" }),
      el("td", { text: turn.agent + (turn.resumed ? " (resumed)" : "") }),
      el("td", { class: "status", "data-status": turn.status, text: turn.status + (turn.category ? " · " + turn.category : "") }),
      el("td", { text: ms(turn.durationMs) }),
      el("td", { class: "model-calls", text: turn.modelCalls }),
      el("td", { class: "tool-calls", text: turn.toolCalls }),
      el("td", { class: "tokens", text: tokens(turn.tokens) }));
  }));
  document.querySelector("#runs .empty").hidden = turns.length > 0;
  if (state.selected === undefined && turns.length > 0) {
    state.selected = { trace: turns[0].traceId, span: turns[0].spanId };
    loadRuns(); loadTurn();
  }
}

async function loadTurn() {
  if (state.selected === undefined) return;
  const { turn, nodes } = await get("/api/turn?trace=" + encodeURIComponent(state.selected.trace) + "&span=" + encodeURIComponent(state.selected.span));
  const heading = document.querySelector("#turn h2");
  heading.textContent = turn ? "Turn · " + turn.agent + " · " + turn.status + " · " + tokens(turn.tokens) : "Turn";
  const total = Math.max(...nodes.map((node) => node.offsetMs + node.durationMs), 0.001);
  const tree = document.querySelector("#tree");
  tree.replaceChildren(...nodes.map((node) => el("div", {
      class: "node", "data-depth": node.depth, "data-operation": node.operation, "data-status": node.status,
      "data-path": node.path.join("/"), "data-name": node.name,
      onclick: () => showAttributes(node)
    },
    el("div", { class: "label", style: { paddingLeft: node.depth * 16 + "px" } },
      el("span", { class: "name", text: node.name }),
      node.path.length > 0 ? el("span", { class: "path", text: node.path.join(" › ") }) : undefined,
      el("span", { class: "muted", text: "  " + ms(node.durationMs) })),
    el("div", { class: "bar" }, el("span", { style: { left: (node.offsetMs / total) * 100 + "%", width: (node.durationMs / total) * 100 + "%" } })))));
}

function showAttributes(node) {
  const rows = Object.entries(node.attributes).map(([key, value]) =>
    el("tr", {}, el("td", { class: "muted", text: key }), el("td", {}, key.endsWith(".arguments") || key.endsWith(".result") ? el("pre", { text: pretty(value) }) : el("span", { text: typeof value === "string" ? value : JSON.stringify(value) }))));
  const box = document.querySelector("#attributes");
  const message = node.statusMessage ? [el("pre", { class: "status-message", text: node.statusMessage })] : [];
  box.replaceChildren(el("h2", { text: node.name }), ...message, el("table", {}, el("tbody", {}, ...rows)));
}

async function decide(key, decision, box) {
  const approver = document.querySelector("#decider").value.trim();
  const outcome = box.querySelector(".outcome");
  if (approver === "") { outcome.dataset.kind = "refused"; outcome.textContent = "say who decides (your name above)"; return; }
  const response = await fetch("/api/decide", {
    method: "POST",
    headers: { "content-type": "application/json", "x-inspector-token": token },
    body: JSON.stringify({ key, decision, approver })
  });
  const answer = await response.json().catch(() => ({ error: "the inspector answered " + response.status }));
  const kind = response.ok ? "recorded" : "refused";
  const message = answer.recorded ?? answer.refused ?? answer.error ?? "";
  state.decided.set(key, { kind, message });
  outcome.dataset.kind = kind;
  outcome.textContent = message;
}

async function loadApprovals() {
  const { configured, pending, error } = await get("/api/approvals");
  const list = document.querySelector("#pending");
  document.querySelector("#inbox .empty").textContent = !configured
    ? "No approval store: start the inspector with an approval store to decide calls here."
    : error ? error : "Nothing waits for a decision.";
  const shown = new Set(pending.map((entry) => entry.key));
  // A decided call stays on the page with its outcome, so a second decision shows why it is refused.
  const kept = [...list.querySelectorAll(".pending")].filter((box) => !shown.has(box.dataset.key) && state.decided.has(box.dataset.key));
  for (const box of kept) box.dataset.listed = "false";
  const boxes = pending.map((entry) => {
    const outcome = state.decided.get(entry.key);
    return el("div", { class: "pending", "data-key": entry.key, "data-action": entry.action, "data-listed": "true" },
      el("div", { class: "what", text: entry.action + (entry.tool ? " (" + entry.tool + ")" : "") }),
      el("div", { class: "agents", text: "agent: " + entry.agents.join(" › ") + (entry.call ? " · call " + entry.call : "") }),
      el("div", { class: "reason", text: "reason: " + entry.reason }),
      el("div", { class: "muted", text: "arguments, as the agent redacted them:" }),
      el("pre", { class: "arguments", text: entry.arguments === undefined ? "(not recorded)" : pretty(entry.arguments) }),
      entry.before.length === 0 ? el("div", { class: "muted before-none", text: "No tool results traced before it (content tracing off, or none)." })
        : el("div", { class: "before" }, el("div", { class: "muted", text: "what the model had seen before asking:" }),
          ...entry.before.map((result) => el("div", { class: "tool-result", "data-tool": result.tool },
            el("span", { text: result.tool + (result.path.length > 1 ? " (" + result.path.join(" › ") + ")" : "") + " →" }),
            el("pre", { text: pretty(result.result) })))),
      el("div", {},
        el("button", { class: "approve", onclick: (event) => decide(entry.key, "approve", event.target.closest(".pending")) , text: "Approve" }),
        el("button", { class: "reject", onclick: (event) => decide(entry.key, "reject", event.target.closest(".pending")), text: "Reject" }),
        el("span", { class: "outcome", "data-kind": outcome ? outcome.kind : undefined, text: outcome ? outcome.message : "" })));
  });
  list.replaceChildren(...boxes, ...kept);
  document.querySelector("#inbox .empty").hidden = boxes.length + kept.length > 0;
}

// New spans may hold the tool results an approval waits after: the inbox is read again with them.
async function openThread() {
  const id = document.querySelector("#thread-id").value.trim();
  const box = document.querySelector("#thread");
  if (id === "") return;
  const response = await fetch("/api/thread?id=" + encodeURIComponent(id));
  if (!response.ok) { box.replaceChildren(el("p", { class: "muted", text: await response.text() })); return; }
  const { configured, thread } = await response.json();
  if (!configured) { box.replaceChildren(el("p", { class: "muted", text: "No thread store: start the inspector with one to open threads." })); return; }
  box.replaceChildren(
    el("p", { class: "muted", text: thread.exchanges + " exchange(s)" + (thread.pending.length > 0 ? " · its last turn waits on " + thread.pending.map((call) => call.action).join(", ") : "") }),
    ...(thread.summary ? [el("pre", { class: "summary", text: "summary: " + thread.summary })] : []),
    ...thread.messages.map((message) => el("div", { class: "message", "data-role": message.role },
      el("span", { class: "muted", text: message.role + ": " }),
      el("span", { text: typeof message.content === "string" ? message.content : JSON.stringify(message.content) }),
      ...(message.toolCalls ?? []).map((call) => el("pre", { text: call.name + " " + pretty(call.arguments) })))));
}
document.querySelector("#open-thread").addEventListener("click", openThread);

async function loadMetrics() {
  const { metrics } = await get("/api/metrics");
  const rows = metrics.flatMap((metric) => metric.points.map((point) => {
    const labels = Object.entries(point.attributes).map(([key, value]) => key.replace(/^gen_ai./, "") + "=" + value).join(" ");
    const value = point.count !== undefined && point.count !== null ? point.count + " × (sum " + point.sum + ")" : String(point.value);
    return el("tr", { class: "metric", "data-name": metric.name },
      el("td", { text: metric.name }), el("td", { class: "muted", text: labels }), el("td", { text: value + (metric.unit && metric.unit !== "1" ? " " + metric.unit : "") }));
  }));
  document.querySelector("#metrics tbody").replaceChildren(...rows);
}

const refresh = { spans: () => { loadRuns(); loadTurn(); loadApprovals(); }, approvals: loadApprovals, metrics: loadMetrics };
function listen() {
  const live = document.querySelector("#live");
  const source = new EventSource("/api/events");
  source.onopen = () => { live.dataset.state = "open"; live.textContent = "live"; };
  source.onerror = () => { live.dataset.state = "closed"; live.textContent = "reconnecting"; };
  source.onmessage = (event) => (refresh[event.data] ?? (() => {}))();
}
loadRuns(); loadApprovals(); loadMetrics(); listen();
`

/** The page, with its token in a `<meta>` the script reads; `nonce` lets its one script run under the page's CSP. */
export const page = (token: string, nonce: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="inspector-token" content="${token}" />
    <title>Rolecraft inspector</title>
    <style nonce="${nonce}">${style}</style>
  </head>
  <body>
    <header><h1>Rolecraft inspector</h1><span id="live" data-state="closed">connecting</span></header>
    <main>
      <section id="inbox">
        <h2>Approvals waiting</h2>
        <label>Deciding as <input id="decider" placeholder="your name" autocomplete="name" /></label>
        <p class="empty muted">Nothing waits for a decision.</p>
        <div id="pending"></div>
      </section>
      <section id="runs">
        <h2>Runs</h2>
        <table>
          <thead><tr><th>started</th><th>agent</th><th>status</th><th>duration</th><th>model</th><th>tools</th><th>tokens</th></tr></thead>
          <tbody></tbody>
        </table>
        <p class="empty muted">No turns yet: point an OTLP/HTTP JSON exporter at this address.</p>
      </section>
      <section id="threads">
        <h2>Threads</h2>
        <label>Thread id <input id="thread-id" placeholder="a thread's id" /></label>
        <button id="open-thread">Open</button>
        <div id="thread"></div>
      </section>
      <section id="metrics">
        <h2>Metrics</h2>
        <table><tbody></tbody></table>
      </section>
      <section id="turn">
        <h2>Turn</h2>
        <div id="tree"></div>
        <div id="attributes"></div>
      </section>
    </main>
    <script nonce="${nonce}">${script}</script>
  </body>
</html>
`
