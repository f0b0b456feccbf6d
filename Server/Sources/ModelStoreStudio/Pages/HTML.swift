import Foundation
import ModelStore

/// Escaping and the page frame every studio page shares.
enum HTML {
    /// Text made safe for an element's content or a quoted attribute.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    /// Text made safe for a URL's path segment or query value.
    static func component(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A query string from pairs, leaving out empty values.
    static func query(_ pairs: [(String, String?)]) -> String {
        let parts = pairs.compactMap { name, value in
            value.flatMap { $0.isEmpty ? nil : "\(component(name))=\(component($0))" }
        }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    /// A whole page: the navigation, the content, and (when `live` gives the number of the newest
    /// transaction read before the content) the script that reloads it when the store changes after that.
    static func page(title: String, store: StudioStore, writes: Bool, live: Int64?, body: String) -> String {
        let mode = writes ? "<span class=\"mode write\">read-write</span>" : "<span class=\"mode\">read-only</span>"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · ModelStore Studio</title>
            <style>\(style)</style></head>
            <body>
            <header><a class="brand" href="/">ModelStore Studio</a>
            <nav><a href="/">Entities</a><a href="/schema">Schema</a><a href="/history">History</a><a href="/conflicts">Conflicts</a></nav>
            <span class="store" title="\(escape(store.storeTypeName))">\(escape(store.url))</span> \(mode)
            <span id="live" class="live"\(live.map { " data-after=\"\($0)\"" } ?? "")>\(live == nil ? "" : "live")</span></header>
            <main>
            \(body)
            </main>
            \(live == nil ? "" : liveScript)
            </body></html>
            """
    }

    /// Reloads the page when the server says the store changed after the transaction the page was
    /// rendered at (every event the stream sends is such a change), unless the user is typing: then it
    /// says so and waits.
    ///
    /// A page the browser keeps in its back-forward cache closes its stream (`pagehide`): browsers allow
    /// a few connections per server (six in chromium), and cached pages holding theirs would stall the
    /// next pages for up to a minute. Shown again (`pageshow`), it listens again after its own
    /// transaction, so a change made meanwhile reloads it. The stream's state and the events received
    /// stay in the live marker's `data-stream` and `data-events`, for a look at a page that did not update.
    static let liveScript = """
        <script>
        (function () {
          var live = document.getElementById('live');
          var source = null;
          function listen() {
            source = new EventSource('/events?after=' + encodeURIComponent(live.dataset.after));
            live.dataset.stream = 'connecting';
            source.addEventListener('change', function (event) {
              live.dataset.events = ((live.dataset.events || '') + ' ' + event.data).trim();
              var active = document.activeElement;
              if (active && (active.tagName === 'INPUT' || active.tagName === 'TEXTAREA') && active.value !== active.defaultValue) {
                live.textContent = 'changed: reload to see'; live.className = 'live stale'; return;
              }
              location.reload();
            });
            source.onerror = function () { live.dataset.stream = 'error'; live.textContent = 'live (reconnecting)'; };
            source.onopen = function () {
              live.dataset.stream = 'open';
              if (live.className === 'live') live.textContent = 'live';
            };
          }
          listen();
          window.addEventListener('pagehide', function () {
            if (source) { source.close(); source = null; live.dataset.stream = 'closed'; }
          });
          window.addEventListener('pageshow', function (event) { if (event.persisted && !source) listen(); });
        })();
        </script>
        """

    static let style = """
        body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
        header{display:flex;gap:16px;align-items:center;padding:10px 18px;background:#1f2d3d;color:#fff}
        header a{color:#fff;text-decoration:none}.brand{font-weight:600}nav a{margin-right:12px;opacity:.9}
        .store{font-family:ui-monospace,monospace;opacity:.85;margin-left:auto}
        .mode{font-size:12px;padding:2px 6px;border-radius:4px;background:#3b4d63}.mode.write{background:#a33}
        .live{font-size:12px;color:#7fd17f}.live.stale{color:#ffcf5a}
        main{padding:16px 20px}h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:18px 0 8px}
        table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0002}
        th,td{padding:5px 10px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}
        th{background:#eef1f4;font-weight:600}th a{color:inherit}td.num{text-align:right;font-variant-numeric:tabular-nums}
        a{color:#1a5fb4}code,.mono{font-family:ui-monospace,monospace;font-size:13px}
        .muted{color:#6b7580}.null{color:#9aa3ad;font-style:italic}
        .filter{display:flex;gap:8px;margin:0 0 12px}.filter input[type=text]{flex:1;font:13px ui-monospace,monospace;padding:6px}
        .error{background:#fde8e8;border:1px solid #e0a0a0;padding:8px 12px;white-space:pre;font-family:ui-monospace,monospace}
        .layout{display:flex;gap:18px;align-items:flex-start}.explain{background:#fff;padding:10px 14px;min-width:300px;
        box-shadow:0 1px 2px #0002;font-size:13px}.explain dt{font-weight:600;margin-top:6px}.explain dd{margin:0;font-family:ui-monospace,monospace}
        .explain pre{margin:0;white-space:pre-wrap;font-size:12px}
        .pager{margin:10px 0}.pager a{margin-right:14px}
        .tx{background:#fff;margin:0 0 10px;padding:8px 12px;box-shadow:0 1px 2px #0002}.tx h3{margin:0 0 4px;font-size:14px}
        .kind{display:inline-block;width:52px;font-size:12px;font-weight:600}.insert{color:#187a32}.update{color:#a66300}.delete{color:#b3261e}
        form.inline{display:inline}button{cursor:pointer}.notice{background:#e8f3e8;border:1px solid #9c9;padding:8px 12px;margin-bottom:10px}
        svg text{font:12px system-ui,sans-serif}
        .classes{margin:0 0 10px}.classes ul{display:inline;list-style:none;padding:0;margin:0}
        .classes li{display:inline;margin-left:8px}.classes li ul::before{content:"( "}.classes li ul::after{content:" )"}
        .classes a.current{font-weight:700;color:#1d232b;text-decoration:none}
        """

    /// A value for display: `nil` greyed, strings as they are, data by size.
    static func value(_ value: StoreValue) -> String {
        switch value {
        case .null: "<span class=\"null\">nil</span>"
        case .string(let text): escape(text.count > 200 ? String(text.prefix(200)) + "…" : text)
        default: escape(value.description)
        }
    }
}
