"""Static files the dashboard ships: logo, CSS and small public demo files."""
