#ifndef SOUNDFIT_CJACK_SHIM_H
#define SOUNDFIT_CJACK_SHIM_H

#include <jack/jack.h>
#include <jack/types.h>
#include <jack/metadata.h>
#include <jack/midiport.h>
#include <jack/uuid.h>

/// `jack_client_open` is variadic and cannot be called from Swift. This wrapper passes the
/// server name when one is given (JackServerName) and leaves JACK's own default otherwise.
static inline jack_client_t *soundfit_jack_client_open(const char *client_name,
                                                       jack_options_t options,
                                                       jack_status_t *status,
                                                       const char *server_name) {
    if (server_name != NULL && server_name[0] != '\0') {
        return jack_client_open(client_name, (jack_options_t)(options | JackServerName), status,
                                server_name);
    }
    return jack_client_open(client_name, options, status);
}

/// The standard metadata keys are mutable C globals, which Swift 6 refuses to read directly.
static inline const char *soundfit_jack_metadata_pretty_name(void) { return JACK_METADATA_PRETTY_NAME; }
static inline const char *soundfit_jack_metadata_order(void) { return JACK_METADATA_ORDER; }
static inline const char *soundfit_jack_metadata_port_group(void) { return JACK_METADATA_PORT_GROUP; }

#endif
