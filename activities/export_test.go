package activities

// HubErr exposes hubErr to the external tests.
var HubErr = hubErr
