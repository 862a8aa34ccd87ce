/* libjack for the Swift floor client: jack_client_open is variadic, which Swift cannot call. */
#include <jack/jack.h>
static inline jack_client_t *floor_client_open(const char *name) {
    return jack_client_open(name, JackNoStartServer, 0);
}
