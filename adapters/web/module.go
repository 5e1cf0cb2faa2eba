package web

import "go.uber.org/fx"

// Module provides the web page's handler as the http.Handler named "web".
var Module = fx.Module("web",
	fx.Provide(fx.Annotate(Handler, fx.ResultTags(`name:"web"`))),
)
