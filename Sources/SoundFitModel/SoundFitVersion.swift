/// SoundFit's version: the one committed source of it (`soundfit --version`, OSC `/status`,
/// `scripts/check-consumer.sh`): the number of the last release. A release is tagged `v` + this
/// (`git tag -a v0.7.0`); the install tests fail when the newest reachable `v*` tag says otherwise.
public enum SoundFitVersion {
    public static let current = "0.7.0"
}
