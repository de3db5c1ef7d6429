"""Program -> Program rewrites from the papers, one module per rewrite."""
