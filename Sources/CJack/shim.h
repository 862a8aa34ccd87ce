#ifndef SOUNDFIT_CJACK_SHIM_H
#define SOUNDFIT_CJACK_SHIM_H

#include <jack/jack.h>
#include <jack/types.h>

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

#endif
