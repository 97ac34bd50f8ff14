package web

func (s *Server) extraRoutes() []route { return nil }
