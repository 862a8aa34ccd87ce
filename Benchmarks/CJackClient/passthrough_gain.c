/* The smallest JACK client that does a comparable job: two inputs, two outputs, each output its
 * input times 0.5 (-6 dB), in the process callback. Built by Benchmarks/scripts/jackbench.py
 * (cc -O2, plain x86-64) as the floor of what a JACK client costs per cycle: the kernel wake-ups
 * and libjack with next to no work of its own (jack_vs_faust.py --floor). */
#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static jack_port_t *inputs[2], *outputs[2];
static volatile sig_atomic_t running = 1;

static int process(jack_nframes_t frames, void *unused) {
    (void)unused;
    for (int channel = 0; channel < 2; channel++) {
        const float *in = jack_port_get_buffer(inputs[channel], frames);
        float *out = jack_port_get_buffer(outputs[channel], frames);
        for (jack_nframes_t frame = 0; frame < frames; frame++) out[frame] = 0.5f * in[frame];
    }
    return 0;
}

static void stop(int signal) { (void)signal; running = 0; }

int main(int argc, char **argv) {
    jack_client_t *client = jack_client_open(argc > 1 ? argv[1] : "passthrough_gain", JackNoStartServer, NULL);
    if (!client) {
        fprintf(stderr, "cannot connect to JACK\n");
        return 1;
    }
    char name[16];
    for (int channel = 0; channel < 2; channel++) {
        snprintf(name, sizeof name, "in_%d", channel + 1);
        inputs[channel] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        snprintf(name, sizeof name, "out_%d", channel + 1);
        outputs[channel] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    }
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) return 1;
    while (running) pause();
    jack_client_close(client);
    return 0;
}
