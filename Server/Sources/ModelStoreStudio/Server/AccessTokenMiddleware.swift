import Hummingbird

/// Lets through only requests that carry the studio's access token: in the `token` query parameter
/// (the printed URL), after which a cookie carries it, or in that cookie. Anything else gets 401.
///
/// A GET with the token in its query is answered with a redirect to the same address without it,
/// setting the cookie (`HttpOnly`, `SameSite=Strict`), so the token does not stay in the address bar.
struct AccessTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The cookie that carries the token.
    static var cookieName: String { "modelstore_studio" }

    let token: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let given = request.uri.queryParameters["token"] {
            guard Self.equal(String(given), token) else { return Self.unauthorized() }
            if request.method == .get {
                var remaining = request.uri.queryParameters.filter { $0.key != "token" }
                    .map { "\(HTML.component(String($0.key)))=\(HTML.component(String($0.value)))" }
                remaining.sort()
                let location = request.uri.path + (remaining.isEmpty ? "" : "?" + remaining.joined(separator: "&"))
                var response = Response(status: .seeOther, headers: [.location: location])
                response.headers[.setCookie] = "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
                return response
            }
            return try await next(request, context)
        }
        if let cookie = request.cookies[Self.cookieName], Self.equal(cookie.value, token) {
            return try await next(request, context)
        }
        return Self.unauthorized()
    }

    /// Compares in time that depends only on the lengths, so a wrong token's timing says nothing of the right one.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    static func unauthorized() -> Response {
        let body = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>401 · ModelStore Studio</title></head>
            <body><h1>401: access token required</h1>
            <p>Open the address that modelstore-studio printed when it started: it carries the access token
            (<code>?token=…</code>).</p></body></html>
            """
        return Response(
            status: .unauthorized, headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
