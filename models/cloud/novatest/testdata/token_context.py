"""A paste filter after noauth2: the request context gets the request's
token, which Zed's Glance client sends (noauth2 leaves it empty)."""


def factory(global_conf, **local_conf):
    def make(app):
        def call(environ, start_response):
            ctx = environ.get("nova.context")
            token = environ.get("HTTP_X_AUTH_TOKEN")
            if ctx is not None and token:
                ctx.auth_token = token
            return app(environ, start_response)
        return call
    return make
