"""The site around the apps: URLs, the home page, the header's links, the open-work switch and the health check."""
